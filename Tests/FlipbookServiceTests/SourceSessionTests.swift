import FlipbookTestSupport
import Foundation
import HTTPServer
import ServiceTestSupport
import SourceRules
import Testing

@testable import FlipbookService
@testable import OutboundHTTP

/// Registration by URL with `Prefer: respond-async`: the fetch feeds an upload session, so frames
/// are served while a slow origin (on loopback, sending a GIF in slices) still sends; the
/// refusals reach the session and its waiters; a body cut off mid-way stores nothing.
@Suite("Sources into upload sessions", .serialized, .ownThreads)
struct SourceSessionTests {
    typealias Sessions = UploadSessionTests
    static let async = ["Content-Type": "application/json", "Prefer": "respond-async"]

    /// `POST /images` (or `PUT /images/{name}`) by URL asking for an answer at once.
    static func registerAsync(_ service: TestService, _ url: String, name: String? = nil) throws -> HTTPTestResponse {
        let body = try JSONSerialization.data(withJSONObject: ["url": url])
        return try service.client.send(
            name == nil ? "POST" : "PUT", name.map { "/images/\($0)" } ?? "/images", headers: Self.async,
            body: Array(body))
    }

    /// The session a 202 names.
    static func sessionID(_ accepted: HTTPTestResponse) throws -> String {
        #expect(accepted.status == 202, "\(accepted.text)")
        #expect(accepted.header("Preference-Applied") == "respond-async")
        let id = try #require(accepted.json["uploadId"] as? String)
        #expect(accepted.header("Location") == "/uploads/\(id)")
        return id
    }

    // The helpers below poll with `Task.sleep`, which gives the test's thread back between
    // polls (a `Thread.sleep` would hold one of the cooperative pool's two threads, and every
    // other test would wait for it). Counted in polls, not wall time, as in
    // ``UploadSessionTests/waitForWaiters(_:_:)``: a resumption that comes late does not spend
    // the budget.

    /// `GET /uploads/{id}` once the session has ended (anything but the 200 of a session in
    /// progress).
    static func ending(_ service: TestService, _ id: String) async throws -> HTTPTestResponse {
        for _ in 0..<1500 {
            let status = try service.client.get("/uploads/\(id)")
            if status.status != 200 { return status }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("session \(id) did not end after 1500 polls 20 ms apart")
    }

    /// Waits until the session has `bytes` bytes and more than `moreThan` frames (the count
    /// follows the bytes once the prefix is indexed again); returns its frame count then.
    static func frames(_ service: TestService, _ id: String, whenItHas bytes: Int, moreThan: Int = 0) async throws -> Int {
        for _ in 0..<3000 {
            let status = try service.client.get("/uploads/\(id)")
            guard status.status == 200 else { throw TestFailure("session \(id) ended: \(status.status) \(status.text)") }
            #expect(status.header("Cache-Control") == "no-store" && status.json["complete"] as? Bool == false)
            let frames = status.json["frameCount"] as? Int ?? -1
            if status.json["bytesReceived"] as? Int == bytes && frames > moreThan { return frames }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("session \(id) did not reach \(bytes) bytes after 3000 polls 10 ms apart")
    }

    /// Waits until `count` frame requests wait on sessions.
    static func waiting(_ service: TestService, _ count: Int) async throws {
        try await Sessions.waitForWaiters(service, count)
    }

    @Test func framesAreServedWhileTheOriginStillSends() async throws {
        let bytes = try Corpus.bytes(Sessions.gif)
        let cuts = [bytes.count / 3, bytes.count * 2 / 3]
        let gate = DispatchSemaphore(value: 0)
        let origin = try OriginServer(routes: ["/slow.gif": .sliced(body: bytes, cuts: cuts, gate: gate, closeEarly: false)])
        defer { origin.stop() }
        // A long fetch deadline: the test may be held up between the origin's slices.
        let service = try SourceFetchTests.service { $0.sources.timeoutSeconds = 300 }
        defer { Task { await service.stop() } }
        let id = try Self.sessionID(try Self.registerAsync(service, origin.base + "/slow.gif"))
        var served: [Int: [UInt8]] = [:]
        let first = try await Self.frames(service, id, whenItHas: cuts[0])
        #expect(first > 0)
        for index in 0..<first {
            let frame = try service.client.get("/frames/\(id)/\(index)")
            #expect(frame.status == 200 && frame.header("Cache-Control") == "no-store", "frame \(index)")
            served[index] = frame.body
        }
        // A reader waiting on the next frame is answered when the origin's next slice lands.
        let next = BackgroundRequest(service, "/frames/\(id)/\(first)", headers: ["Prefer": "wait=10"])
        try await Self.waiting(service, 1)
        gate.signal()
        let second = try await Self.frames(service, id, whenItHas: cuts[1], moreThan: first)
        #expect(second > first)
        let answered = try await next.answer()
        #expect(answered.status == 200 && answered.header("X-Frame-Index") == "\(first)")
        served[first] = answered.body
        served[second - 1] = try service.client.get("/frames/\(id)/\(second - 1)").body
        #expect(origin.bytesSent < bytes.count, "the origin has not sent the rest")
        gate.signal()
        let end = try await Self.ending(service, id)
        let imageID = SourceFetchTests.sha256(bytes)
        #expect(end.status == 303 && end.header("Location") == "/images/\(imageID)", "\(end.status) \(end.text)")
        for (index, body) in served {
            #expect(try service.client.get("/frames/\(imageID)/\(index)").body == body, "frame \(index)")
        }
        #expect(service.server.store.record(imageID)?.origin?.url == origin.base + "/slow.gif")
        #expect(try service.metric("flipbook_source_fetches_total", where: "result=\"ok\"") == 1)
    }

    @Test func refusalsReachTheSessionAndItsWaiters() async throws {
        let gate = DispatchSemaphore(value: 0)
        let text = Array("not an image, though it says so".utf8)
        let origin = try OriginServer(routes: [
            "/slow.gif": .slow(seconds: 3, then: SourceFetchTests.gif),
            "/text.gif": .sliced(body: text, cuts: [4], gate: gate, closeEarly: false),
        ])
        defer { origin.stop() }
        let inside = try OriginServer(
            address: "127.0.0.2", routes: ["/secret.gif": .answer(status: 200, headers: [], body: SourceFetchTests.gif)])
        defer { inside.stop() }
        origin.set("/redirect", .answer(status: 302, headers: ["Location: \(inside.base)/secret.gif"], body: []))
        let resolver = StaticResolver(["private.test": [.v4(0x0a00_0001)]])
        let service = try SourceFetchTests.service(resolver: resolver) { $0.sources.timeoutSeconds = 1 }
        defer { Task { await service.stop() } }
        // Refused by the URL's form: answered at once, no session.
        let outright = try Self.registerAsync(service, "ftp://127.0.0.1/a.gif")
        #expect(outright.status == 422 && outright.header("Location") == nil, "\(outright.text)")
        for (path, sessionStatus, rule) in [
            ("http://private.test/a.gif", 422, "address-private"), (origin.base + "/redirect", 422, "address-loopback"),
            (origin.base + "/missing.gif", 502, "404"),
            (origin.base + "/slow.gif", 504, "timeoutSeconds"),
        ] {
            let id = try Self.sessionID(try Self.registerAsync(service, path))
            let waiter = BackgroundRequest(service, "/frames/\(id)/0", headers: ["Prefer": "wait=10"])
            let end = try await Self.ending(service, id)
            #expect(end.status == sessionStatus && end.text.contains(rule), "\(path): \(end.status) \(end.text)")
            #expect(!end.text.contains("10.0.0.1"), "the detail names the rule, not the address")
            let waited = try await waiter.answer()
            #expect(waited.status == sessionStatus && waited.header("Cache-Control") == "no-store", "\(path)")
        }
        #expect(inside.connections == 0, "a refused redirect target never sees a connection")
        // A body that is no image: the waiter gets the uploader's 415, the session 422.
        let id = try Self.sessionID(try Self.registerAsync(service, origin.base + "/text.gif"))
        let waiter = BackgroundRequest(service, "/frames/\(id)/0", headers: ["Prefer": "wait=10"])
        try await Self.waiting(service, 1)
        gate.signal()
        #expect(try await Self.ending(service, id).status == 422)
        #expect(try await waiter.answer().status == 415)
    }

    @Test func aFetchCutMidWayStoresNothing() async throws {
        let bytes = try Corpus.bytes(Sessions.gif)
        let gate = DispatchSemaphore(value: 0)
        let origin = try OriginServer(routes: [
            "/cut.gif": .sliced(body: bytes, cuts: [bytes.count / 2], gate: gate, closeEarly: true)
        ])
        defer { origin.stop() }
        let service = try SourceFetchTests.service()
        defer { Task { await service.stop() } }
        let id = try Self.sessionID(try Self.registerAsync(service, origin.base + "/cut.gif"))
        #expect(try await Self.frames(service, id, whenItHas: bytes.count / 2) > 0)
        #expect(try service.client.get("/frames/\(id)/0").status == 200)
        let waiter = BackgroundRequest(service, "/frames/\(id)/14", headers: ["Prefer": "wait=10"])
        try await Self.waiting(service, 1)
        gate.signal()  // the origin closes the connection instead of sending the rest
        let end = try await Self.ending(service, id)
        #expect(end.status == 502, "\(end.text)")
        #expect(try await waiter.answer().status == 502)
        #expect(service.server.store.record(SourceFetchTests.sha256(bytes)) == nil)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: service.dataDirectory + "/tmp")
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test func aNamedRegistrationAndARefreshFeedSessionsToo() async throws {
        let origin = try OriginServer(routes: [
            "/clip": .answer(status: 200, headers: ["ETag: \"v1\""], body: SourceFetchTests.gif)
        ])
        defer { origin.stop() }
        let service = try SourceFetchTests.service()
        defer { Task { await service.stop() } }
        let named = try Self.sessionID(try Self.registerAsync(service, origin.base + "/clip", name: "clip"))
        let stored = try await Self.ending(service, named)
        #expect(stored.status == 303 && stored.header("Location") == "/images/clip", "\(stored.text)")
        // Unchanged at the origin: the session is an alias of the image refreshed.
        origin.set("/clip", .answer(status: 304, headers: ["ETag: \"v1\""], body: []))
        let unchanged = try service.client.send("POST", "/images/clip/refresh", headers: ["Prefer": "respond-async"])
        let same = try await Self.ending(service, try Self.sessionID(unchanged))
        #expect(same.status == 303 && same.header("Location") == "/images/clip")
        // New bytes: the name moves to them.
        origin.set("/clip", .answer(status: 200, headers: ["ETag: \"v2\""], body: SourceFetchTests.webp))
        let changed = try service.client.send("POST", "/images/clip/refresh", headers: ["Prefer": "respond-async"])
        #expect(try await Self.ending(service, try Self.sessionID(changed)).status == 303)
        #expect(SourceFetchTests.json(try service.client.get("/images/clip"))["format"] as? String == "webp")
        #expect(try service.client.send("POST", "/images/none/refresh", headers: ["Prefer": "respond-async"]).status == 404)
    }

    @Test func behindSeveralReplicasTheRegistrationAnswersWhenDone() async throws {
        // With uploads.key set (replicas behind a proxy that routes sessions by id), a session
        // made where the fetch runs would not be where its id is routed: the preference is
        // ignored and the registration answers when stored, as without it.
        let origin = try OriginServer(routes: [
            "/clip": .answer(status: 200, headers: ["ETag: \"v1\""], body: SourceFetchTests.gif)
        ])
        defer { origin.stop() }
        let service = try SourceFetchTests.service { $0.uploads.key = String(repeating: "5a", count: 32) }
        defer { Task { await service.stop() } }
        let stored = try Self.registerAsync(service, origin.base + "/clip")
        #expect(stored.status == 201, "\(stored.text)")
        #expect(stored.header("Preference-Applied") == nil)
        let id = try #require(stored.json["id"] as? String)
        #expect(id.count == 64)
        let named = try Self.registerAsync(service, origin.base + "/clip", name: "clip")
        #expect(named.status == 201 || named.status == 200, "\(named.text)")
        #expect(named.header("Preference-Applied") == nil)
        origin.set("/clip", .answer(status: 304, headers: ["ETag: \"v1\""], body: []))
        let refreshed = try service.client.send("POST", "/images/clip/refresh", headers: ["Prefer": "respond-async"])
        #expect(refreshed.status == 200, "\(refreshed.text)")
        #expect(refreshed.header("Preference-Applied") == nil)
    }

    @Test func respondAsyncIsReadFromPrefer() {
        func prefers(_ values: [String]) -> Bool {
            var headers = HTTPHeaders()
            for value in values { headers.add(name: "Prefer", value: value) }
            return SourceRoutes.prefersRespondAsync(HTTPRequest(method: .POST, target: "/images", headers: headers))
        }
        #expect(!prefers([]))
        #expect(prefers(["respond-async"]))
        #expect(prefers(["wait=5, Respond-Async"]))
        #expect(prefers(["return=minimal", "respond-async; x=1"]))
        #expect(!prefers(["respond-asynchronously", "wait=respond-async"]))
    }
}
