import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// The frames served while an upload arrives are kept in the frame cache (staged under the
/// session) and become the stored image's frames: its first readers find them cached, with the
/// same bytes, and nothing is decoded for them again. (A session cut off leaves nothing staged:
/// UploadSessionTests.)
@Suite("Upload frames adopted by the frame cache", .ownThreads)
struct UploadFrameAdoptionTests {
    typealias Sessions = UploadSessionTests

    static func stats(_ service: TestService) throws -> [String: Any] {
        try service.client.get("/stats").json
    }

    @Test func framesMadeDuringTheUploadAreTheStoredImagesFrames() async throws {
        let service = try TestService()
        let bytes = try Corpus.bytes(Sessions.gif)
        let id = try Sessions.createSession(service)
        let connection = try Sessions.startPut(service, id, length: bytes.count)
        let cut = 6000
        try await Sessions.sendSlice(service, connection, id, bytes[0..<cut], total: cut)
        let arrived = try Sessions.progress(service, id).frames
        #expect(arrived >= 3)
        var served: [String: [UInt8]] = [:]
        let paths = (0..<arrived).flatMap { ["\($0)", "\($0)?width=20&format=webp"] }
        for path in paths {
            let frame = try service.client.get("/frames/\(id)/\(path)")
            #expect(frame.status == 200, "\(path)")
            served[path] = frame.body
        }
        let during = try Self.stats(service)
        #expect(during["stagedFrames"] as? Int == paths.count)
        #expect((during["stagedBytes"] as? Int ?? 0) > 0)

        try connection.send(Array(bytes[cut...]))
        let stored = try connection.readResponse()
        #expect(stored.status == 201)
        let imageID = try #require(stored.json["id"] as? String)
        let after = try Self.stats(service)
        #expect(after["adopted"] as? Int == paths.count)
        #expect(after["stagedFrames"] as? Int == 0 && after["stagedBytes"] as? Int == 0)
        let residency = try service.client.get("/images/\(imageID)/cache").json
        #expect(residency["cachedFrames"] as? [Int] == Array(0..<arrived))

        // Every frame read during the upload is a hit now: no miss, so no decode for any of them.
        let (hits, misses) = (after["hits"] as? Int ?? -1, after["misses"] as? Int ?? -1)
        for path in paths {
            let frame = try service.client.get("/frames/\(imageID)/\(path)")
            #expect(frame.status == 200 && frame.body == served[path], "\(path)")
            #expect(frame.header("Cache-Control") != "no-store", "\(path)")
        }
        let read = try Self.stats(service)
        #expect(read["misses"] as? Int == misses)
        #expect(read["hits"] as? Int == hits + paths.count)
        await service.stop()
    }
}
