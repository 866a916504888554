import FlipbookTestSupport
import Foundation
import SourceRules
import Testing

@testable import OutboundHTTP

/// The fetcher alone, against an origin on loopback (allowed here by `127.0.0.1/32`): what it
/// hands back, what it refuses, and that its checks hold below any route of the service.
@Suite(.serialized, .ownThreads)
struct SourceFetcherTests {
    static let body = Array("GIF89a and some bytes".utf8)

    /// A fetcher allowed to reach 127.0.0.1 only.
    static func fetcher(maxBytes: Int = 1 << 20, timeoutSeconds: Double = 10, resolver: any SourceResolver = StaticResolver([:]))
        -> SourceFetcher
    {
        let (policy, _) = SourcePolicy.parse(prefixes: [], networks: ["127.0.0.1/32"])
        return SourceFetcher(policy: policy, maxBytes: maxBytes, timeoutSeconds: timeoutSeconds, resolver: resolver)
    }

    /// Fetches `url`; what was fetched and the bytes handed over.
    static func fetch(_ fetcher: SourceFetcher, _ url: String, validators: SourceFetcher.Validators? = nil)
        throws(SourceFetchFailure) -> (SourceFetcher.Fetched, [UInt8])
    {
        let received = Received()
        let fetched = try fetcher.fetch(url, validators: validators) { received.bytes += Array($0) }
        return (fetched, received.bytes)
    }

    /// The body as it arrives (the fetcher's callback escapes).
    final class Received: @unchecked Sendable {
        var bytes: [UInt8] = []
    }

    @Test func redirectsAreFollowedToTheBodyAndLoopsEndAtTheLimit() throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        origin.set("/a", .answer(status: 302, headers: ["Location: /b"], body: []))
        origin.set("/b", .answer(status: 307, headers: ["Location: c.gif"], body: []))
        origin.set("/c.gif", .answer(status: 200, headers: ["ETag: \"e1\""], body: Self.body))
        origin.set("/loop", .answer(status: 302, headers: ["Location: /loop"], body: []))
        let (fetched, bytes) = try Self.fetch(Self.fetcher(), origin.base + "/a")
        #expect(
            fetched
                == .init(finalURL: origin.base + "/c.gif", status: 200, etag: "\"e1\"", lastModified: nil, bytes: Self.body.count)
        )
        #expect(bytes == Self.body)
        #expect(throws: SourceFetchFailure.tooManyRedirects(3)) { try Self.fetch(Self.fetcher(), origin.base + "/loop") }
        #expect(origin.heads.filter { $0.hasPrefix("GET /loop") }.count == 4, "the first request and 3 redirects")
        // Asked with identity encoding and without cookies or credentials.
        let head = try #require(origin.heads.first)
        #expect(head.contains("Accept-Encoding: identity") && !head.contains("Cookie") && !head.contains("Authorization"))
    }

    @Test func aMatchingValidatorIsA304WithoutABody() throws {
        let origin = try OriginServer(routes: ["/clip": .answer(status: 304, headers: ["ETag: \"v1\""], body: [])])
        defer { origin.stop() }
        let (fetched, bytes) = try Self.fetch(
            Self.fetcher(), origin.base + "/clip",
            validators: .init(etag: "\"v1\"", lastModified: "Sat, 28 Nov 2026 10:00:00 GMT"))
        #expect(fetched.status == 304 && fetched.bytes == 0 && bytes.isEmpty)
        #expect(origin.heads.last?.contains("If-None-Match: \"v1\"") == true)
        #expect(origin.heads.last?.contains("If-Modified-Since: Sat, 28 Nov 2026 10:00:00 GMT") == true)
    }

    @Test func aBodyPastTheLimitIsCutAndAnEncodedOrFailedAnswerRefused() throws {
        let origin = try OriginServer(routes: [
            "/announced": .stream(total: 8 << 20, contentLength: true),
            "/streamed": .stream(total: 64 << 20, contentLength: false),
            "/gz": .answer(status: 200, headers: ["Content-Encoding: gzip"], body: Self.body),
            "/fails": .answer(status: 500, headers: [], body: []),
        ])
        defer { origin.stop() }
        let fetcher = Self.fetcher(maxBytes: 256 * 1024)
        #expect(throws: SourceFetchFailure.tooLarge(256 * 1024)) { try Self.fetch(fetcher, origin.base + "/announced") }
        #expect(throws: SourceFetchFailure.tooLarge(256 * 1024)) { try Self.fetch(fetcher, origin.base + "/streamed") }
        for _ in 0..<100 where !origin.cutShort { usleep(50_000) }
        #expect(origin.cutShort && origin.bytesSent < 16 << 20, "sent \(origin.bytesSent)")
        #expect(throws: SourceFetchFailure.contentEncoding("gzip")) { try Self.fetch(fetcher, origin.base + "/gz") }
        #expect(throws: SourceFetchFailure.originStatus(500)) { try Self.fetch(fetcher, origin.base + "/fails") }
    }

    @Test func aHangingLookupTimesOutWithinTheDeadline() throws {
        let resolver = HangingResolver(answer: [.v4(0x7f00_0001)])
        defer { resolver.release.signal() }
        let fetcher = Self.fetcher(timeoutSeconds: 0.3, resolver: resolver)
        let started = Date()
        #expect(throws: SourceFetchFailure.timedOut(0.3)) {
            try fetcher.fetch("http://hangs.test/a.gif") { _ in }
        }
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 0.25 && elapsed < 1.5, "\(elapsed) s")
    }

    @Test func theConnectTimeCheckRefusesWhatTheLookupDidNotSee() throws {
        // One hop: the address libcurl is handed is checked again as the socket opens.
        let origin = try OriginServer(routes: ["/a.gif": .answer(status: 200, headers: [], body: Self.body)])
        defer { origin.stop() }
        let url = try SourceURL("http://pinned.test:\(origin.port)/a.gif")
        let hop = SourceHop(url: url, pinned: [.v4(0x7f00_0001)], policy: SourcePolicy(), maxBytes: 1 << 20) { _ in }
        #expect(throws: SourceFetchFailure.refused(.address(.loopback))) {
            try hop.run(OutboundClient(reuseConnections: false), headers: [], timeoutMilliseconds: 5000)
        }
        #expect(origin.connections == 0)
    }
}
