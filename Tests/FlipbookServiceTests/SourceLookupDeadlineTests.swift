import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import SourceRules
import Testing

@testable import FlipbookService
@testable import OutboundHTTP

/// The name lookup counts against `sources.timeoutSeconds` (the fetcher alone: `SourceFetcherTests`).
@Suite("Source name lookups", .serialized, .ownThreads)
struct SourceLookupDeadlineTests {
    @Test func aHangingLookupIs504AndTheLateAnswerIsNotUsed() async throws {
        let origin = try OriginServer(routes: ["/a.gif": .answer(status: 200, headers: [], body: SourceFetchTests.gif)])
        defer { origin.stop() }
        let resolver = HangingResolver(answer: [.v4(0x7f00_0001)])
        let service = try SourceFetchTests.service(resolver: resolver) { $0.sources.timeoutSeconds = 1 }
        defer { Task { await service.stop() } }
        let url = "http://hangs.test:\(origin.port)/a.gif"
        let started = Date()
        let answer = try SourceFetchTests.register(service, url)
        #expect(answer.status == 504, "\(answer.text)")
        #expect(Date().timeIntervalSince(started) < 2.5)
        // Asked to respond at once, the session ends 504 in time as well.
        let id = try SourceSessionTests.sessionID(try SourceSessionTests.registerAsync(service, url))
        #expect(try Self.ending(service, id, by: started.addingTimeInterval(5))?.status == 504, "ended within 5 s")
        // The lookups answer late: nobody connects on their strength.
        resolver.release.signal()
        resolver.release.signal()
        try await Task.sleep(for: .milliseconds(300))
        #expect(origin.connections == 0)
        #expect(try service.metric("flipbook_source_fetches_total", where: "result=\"timeout\"") == 2)
    }

    /// `GET /uploads/{id}` once the session has ended, polled until `deadline` (nil if it has
    /// not ended by then). Blocking, not suspending: the test measures the server's deadline, and
    /// a resumption that came late would be counted against it.
    static func ending(_ service: TestService, _ id: String, by deadline: Date) throws -> HTTPTestResponse? {
        while Date() < deadline {
            let status = try service.client.get("/uploads/\(id)")
            if status.status != 200 { return status }
            usleep(20_000)
        }
        return nil
    }
}
