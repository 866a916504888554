import AnimatedImage
import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// Upload sessions over raw sockets: a body sent in slices with reads in between (the frame
/// count, frames byte-identical to the finished image's, waits answered when the bytes land,
/// `Prefer: wait` running out), the alias, and the endings with waiters: past the end, cut off,
/// malformed; the limits.
@Suite("Upload sessions", .ownThreads)
struct UploadSessionTests {
    static let gif = "wuffs/muybridge.gif"

    /// A service for tests whose uploads pause between slices: the body idle timeout (and the
    /// start deadline an upload id carries) are long, so
    /// a test held up by the rest of the suite (every suite runs at once on a few threads; a
    /// resumption can wait for seconds) is not cut off as a stalled uploader. The tests of the
    /// idle timeout itself set theirs.
    static func service(_ configure: (inout FlipbookSettings) -> Void = { _ in }) throws -> TestService {
        try TestService {
            $0.server.bodyIdleTimeoutSeconds = 600
            $0.uploads.startSeconds = 600  // an id's start deadline, likewise
            // Waits (no `Prefer`, or the tests' `Prefer: wait=600`) are not cut to the default
            // 10 s: a test held up for tens of seconds after its request went out (every suite
            // runs at once on a few threads; on a loaded machine a task resumes that late) must
            // still find it waiting. A wait that is never answered still fails the test, at
            // ``BackgroundRequest/answer()``'s minute.
            $0.uploads.maxWaitSeconds = 600
            configure(&$0)
        }
    }

    /// `POST /uploads`; returns the session's id.
    static func createSession(_ service: TestService) throws -> String {
        let created = try service.client.send("POST", "/uploads")
        #expect(created.status == 201)
        let id = try #require(created.json["uploadId"] as? String)
        // 32 hex digits of randomness, the start deadline, the tag: within nginx's id alphabet.
        #expect(id.count == UploadIDs.length && id.prefix(32).allSatisfy(\.isHexDigit))
        #expect(id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) })
        #expect(created.header("Location") == "/uploads/\(id)")
        return id
    }

    /// A connection that has sent the head of `PUT /uploads/{id}` for `length` bytes.
    static func startPut(_ service: TestService, _ id: String, length: Int) throws -> RawHTTPClient {
        let connection = try RawHTTPClient(port: service.server.port, timeoutSeconds: 120)
        try connection.send("PUT /uploads/\(id) HTTP/1.1\r\nHost: x\r\nContent-Length: \(length)\r\n\r\n")
        return connection
    }

    /// Waits until `count` frame requests wait on upload sessions, so that requests sent in the
    /// background are surely waiting before the test goes on (a fixed 0.2 s sleep was not enough
    /// on a loaded machine: a late request found the session ended instead). Counted in polls,
    /// not wall time: when the cooperative pool is busy elsewhere for a while, the background
    /// requests and this loop are held up alike, and the budget is not spent meanwhile.
    static func waitForWaiters(_ service: TestService, _ count: Int) async throws {
        for _ in 0..<1000 {
            if service.server.uploads.waiting.load(ordering: .relaxed) >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("\(count) frame requests were not waiting after 1000 polls 10 ms apart")
    }

    static func progress(_ service: TestService, _ id: String) throws -> (frames: Int, bytes: Int) {
        let status = try service.client.get("/uploads/\(id)")
        // Required, not expected: callers slice the file by the bytes reported, and a session
        // ended early (410) must fail the test, not crash the whole test process on a range.
        try #require(status.status == 200, "GET /uploads/\(id): \(status.status) \(status.text)")
        #expect(status.header("Cache-Control") == "no-store")
        #expect(status.json["complete"] as? Bool == false)
        return (status.json["frameCount"] as? Int ?? -1, status.json["bytesReceived"] as? Int ?? -1)
    }

    /// Sends `count` bytes and waits until the server has them all.
    static func sendSlice(
        _ service: TestService, _ connection: RawHTTPClient, _ id: String, _ bytes: ArraySlice<UInt8>, total: Int
    ) async throws {
        try connection.send(Array(bytes))
        for _ in 0..<200 {
            if try progress(service, id).bytes == total { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the server did not receive \(total) bytes after 200 polls 10 ms apart")
    }

    @Test func framesArriveWithTheBytesAndMatchTheFinishedImage() async throws {
        let service = try Self.service()
        let bytes = try Corpus.bytes(Self.gif)
        let id = try Self.createSession(service)
        let initial = try Self.progress(service, id)
        #expect(initial.frames == 0 && initial.bytes == 0)
        let connection = try Self.startPut(service, id, length: bytes.count)
        var counts: [Int] = []
        var served: [Int: [UInt8]] = [:]
        var sent = 0
        for cut in stride(from: 600, to: bytes.count, by: 600) + [bytes.count - 1] {
            try await Self.sendSlice(service, connection, id, bytes[sent..<cut], total: cut)
            sent = cut
            let frames = try Self.progress(service, id).frames
            #expect(frames >= (counts.last ?? 0), "frameCount never goes down")
            counts.append(frames)
            if frames > 0, served[frames - 1] == nil {
                let frame = try service.client.get("/frames/\(id)/\(frames - 1)")
                #expect(frame.status == 200)
                #expect(frame.header("Cache-Control") == "no-store")
                #expect(frame.header("Content-Type") == "image/png")
                served[frames - 1] = frame.body
            }
        }
        #expect(counts.first == 0 && (counts.last ?? 0) > 5)
        try connection.send(Array(bytes[sent...]))
        let stored = try connection.readResponse()
        #expect(stored.status == 201)
        let imageID = try #require(stored.json["id"] as? String)
        #expect(stored.json["frameCount"] as? Int == 15)
        for (index, body) in served {
            #expect(try service.client.get("/frames/\(imageID)/\(index)").body == body, "frame \(index)")
        }
        let alias = try service.client.get("/uploads/\(id)")
        #expect(alias.status == 303 && alias.header("Location") == "/images/\(imageID)")
        let frameAlias = try service.client.get("/frames/\(id)/3?width=10")
        #expect(frameAlias.status == 303 && frameAlias.header("Location") == "/frames/\(imageID)/3?width=10")
        #expect(try service.client.send("PUT", "/uploads/\(id)", body: bytes).status == 409)
        await service.stop()
    }

    /// Issue 33's defect: a poll answered while an index of the prefix was under way said the
    /// bytes received now and the frames of the (shorter) prefix being indexed — 2,719,744 bytes
    /// and 207 frames where those bytes held 210. Both now come from one index.
    @Test func progressReportsTheBytesAndTheFramesOfOneIndex() async throws {
        let service = try Self.service()
        let bytes = try Corpus.bytes(Self.gif)
        func completeFrames(_ count: Int) -> Int {
            (try? AnimatedImage(bytes: Array(bytes[0..<count]), verification: .structural))?.frameCount ?? 0
        }
        let (first, second) = (bytes.count / 2, bytes.count - 1)
        try #require(completeFrames(first) < completeFrames(second))
        let id = try Self.createSession(service)
        let connection = try Self.startPut(service, id, length: bytes.count)
        try await Self.sendSlice(service, connection, id, bytes[0..<first], total: first)
        let session = try #require(service.server.uploads.existing(id))
        // An index is under way (claimed here, and held) while the rest of the bytes land.
        #expect(session.claimIndexing())
        try connection.send(Array(bytes[first..<second]))
        for _ in 0..<500 where session.bytesReceived < second { try await Task.sleep(for: .milliseconds(10)) }
        try #require(session.bytesReceived == second)
        let during = try Self.progress(service, id)
        #expect(
            during.frames == completeFrames(during.bytes), "\(during.bytes) bytes hold \(completeFrames(during.bytes)) frames")
        #expect(during.bytes == first)
        // The index ends: the next poll indexes, and reports, every byte received.
        _ = session.finishIndexing(bytes: Int.max)
        let after = try Self.progress(service, id)
        #expect(after.bytes == second && after.frames == completeFrames(second))
        try connection.send(Array(bytes[second...]))
        #expect(try connection.readResponse().status == 201)
        await service.stop()
    }

    @Test func aWaitIsAnsweredWhenTheBytesLandOrRunsOut() async throws {
        let service = try Self.service()
        let bytes = try Corpus.bytes(Self.gif)
        let id = try Self.createSession(service)
        // Waiting before the body starts, on frame 2, by time too.
        let early = BackgroundRequest(service, "/frames/\(id)/2")
        let byTime = BackgroundRequest(service, "/frames/\(id)?t=0")
        let connection = try Self.startPut(service, id, length: bytes.count)
        try await Self.sendSlice(service, connection, id, bytes[0..<4000], total: 4000)
        let frames = try Self.progress(service, id).frames
        #expect(frames > 2)
        let answered = try await early.answer()
        #expect(answered.status == 200 && answered.header("X-Frame-Index") == "2")
        let atZero = try await byTime.answer()
        #expect(atZero.status == 200 && atZero.header("Content-Location") == "/frames/\(id)/0")

        // Nothing arrives within the wait: 503, not cached.
        let start = Date()
        let late = try service.client.get("/frames/\(id)/\(frames + 1)", headers: ["Prefer": "wait=1"])
        #expect(late.status == 503)
        #expect(late.header("Retry-After") == "1" && late.header("Cache-Control") == "no-store")
        #expect(Date().timeIntervalSince(start) >= 0.9)

        // A waiter on the next frame is answered once its bytes are in; one past the end gets 404.
        let next = BackgroundRequest(service, "/frames/\(id)/\(frames)", headers: ["Prefer": "wait=600"])
        let pastEnd = BackgroundRequest(service, "/frames/\(id)/40", headers: ["Prefer": "wait=600"])
        try await Self.waitForWaiters(service, 2)
        try connection.send(Array(bytes[4000...]))
        #expect(try connection.readResponse().status == 201)
        let nextFrame = try await next.answer()
        #expect(
            nextFrame.status == 200 && nextFrame.header("X-Frame-Index") == String(frames),
            "\(String(decoding: nextFrame.body, as: UTF8.self))")
        let past = try await pastEnd.answer()
        #expect(past.status == 404)
        await service.stop()
    }

    @Test func aCutUploadAnswersItsWaiters410AndLeavesNothing() async throws {
        let service = try Self.service()
        let bytes = try Corpus.bytes(Self.gif)
        let id = try Self.createSession(service)
        let connection = try Self.startPut(service, id, length: bytes.count)
        try await Self.sendSlice(service, connection, id, bytes[0..<3000], total: 3000)
        #expect(try Self.progress(service, id).frames >= 1)
        #expect(try service.client.get("/frames/\(id)/0").status == 200)  // staged in the frame cache
        #expect(try service.client.get("/stats").json["stagedFrames"] as? Int == 1)
        let waiter = BackgroundRequest(service, "/frames/\(id)/14", headers: ["Prefer": "wait=600"])
        try await Self.waitForWaiters(service, 1)
        shutdown(connection.fd, Int32(SHUT_RDWR))  // the client goes (its descriptor is closed once, by the client)
        let answer = try await waiter.answer()
        #expect(answer.status == 410 && answer.header("Cache-Control") == "no-store")
        #expect(try service.client.get("/uploads/\(id)").status == 410)
        #expect(try service.client.get("/frames/\(id)/0").status == 410)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: service.dataDirectory + "/tmp")
        #expect(leftovers.isEmpty, "\(leftovers)")
        let images = try service.client.get("/images").json["images"] as? [Any]
        #expect(images?.isEmpty ?? true)
        let stats = try service.client.get("/stats").json
        #expect(stats["stagedFrames"] as? Int == 0 && stats["stagedBytes"] as? Int == 0, "nothing staged is kept")
        #expect(stats["adopted"] as? Int == 0)
        await service.stop()
    }

    @Test func aMalformedBodyGivesTheUploaderAndTheWaitersTheSameProblem() async throws {
        let service = try Self.service()
        let junk = [UInt8](repeating: 0x41, count: 5000)
        let id = try Self.createSession(service)
        let waiter = BackgroundRequest(service, "/frames/\(id)/0", headers: ["Prefer": "wait=600"])
        try await Self.waitForWaiters(service, 1)
        let uploader = try service.client.send("PUT", "/uploads/\(id)", body: junk)
        #expect(uploader.status == 415)
        let answer = try await waiter.answer()
        #expect(answer.status == 415 && answer.body == uploader.body)
        #expect(try service.client.get("/uploads/\(id)").status == 422)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: service.dataDirectory + "/tmp")
        #expect(leftovers.isEmpty, "\(leftovers)")
        await service.stop()
    }

    @Test func sessionsAreBoundedAndExpire() async throws {
        let service = try TestService {
            $0.uploads.maxSessions = 2
            $0.uploads.startSeconds = 0.5
        }
        _ = try Self.createSession(service)
        let second = try Self.createSession(service)
        let refused = try service.client.send("POST", "/uploads")
        #expect(refused.status == 429 && refused.header("Retry-After") != nil)
        #expect(try service.client.send("POST", "/uploads", body: Array("x".utf8)).status == 400)
        try await Task.sleep(for: .seconds(0.7))
        #expect(try service.client.get("/uploads/\(second)").status == 404)
        _ = try Self.createSession(service)
        #expect(try service.client.get("/uploads/00000000000000000000000000000000").status == 404)
        #expect(try service.client.send("PUT", "/uploads/nope", body: [1]).status == 404)
        await service.stop()
    }

    @Test func theUploadTokenGuardsSessions() async throws {
        let service = try TestService { $0.auth.uploadToken = "secret" }
        #expect(try service.client.send("POST", "/uploads").status == 401)
        let created = try service.client.send("POST", "/uploads", headers: ["Authorization": "Bearer secret"])
        #expect(created.status == 201)
        let id = try #require(created.json["uploadId"] as? String)
        #expect(try service.client.send("PUT", "/uploads/\(id)", body: [1, 2, 3]).status == 401)
        await service.stop()
    }
}
