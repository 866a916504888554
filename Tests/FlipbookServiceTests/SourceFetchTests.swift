import Crypto
import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import SourceRules
import Testing

@testable import FlipbookService
@testable import OutboundHTTP

/// Images registered by URL, live: origin servers on loopback (allowed through
/// `sources.allowedNetworks`), redirects, sizes, slowness, encodings, refresh.
@Suite(.serialized, .ownThreads)
struct SourceFetchTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let gif = Array(FileManager.default.contents(atPath: repository.appendingPathComponent("Samples/orbit.gif").path)!)
    static let webp = Array(FileManager.default.contents(atPath: repository.appendingPathComponent("Samples/orbit.webp").path)!)

    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// A service that may fetch from 127.0.0.1 only.
    static func service(
        resolver: any SourceResolver = SystemResolver(), _ configure: (inout FlipbookSettings) -> Void = { _ in }
    ) throws -> TestService {
        try TestService(sourceResolver: resolver) { settings in
            settings.sources.allowedNetworks = ["127.0.0.1/32"]
            configure(&settings)
        }
    }

    static func register(_ service: TestService, _ url: String, name: String? = nil) throws -> HTTPTestResponse {
        let body = try JSONSerialization.data(withJSONObject: ["url": url])
        return try service.client.send(
            name == nil ? "POST" : "PUT", name.map { "/images/\($0)" } ?? "/images",
            headers: ["Content-Type": "application/json"], body: Array(body))
    }

    static func json(_ response: HTTPTestResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
    }

    @Test func aURLRegistersAsAnUploadOfItsBytesWould() async throws {
        let origin = try OriginServer(routes: [
            "/orbit.gif": .answer(status: 200, headers: ["ETag: \"v1\"", "Content-Type: text/plain"], body: Self.gif)
        ])
        defer { origin.stop() }
        let service = try Self.service()
        defer { Task { await service.stop() } }
        let first = try Self.register(service, origin.base + "/orbit.gif")
        #expect(first.status == 201, "\(first.text)")
        let id = Self.sha256(Self.gif)
        #expect(Self.json(first)["id"] as? String == id)
        #expect(first.header("Location") == "/images/\(id)")
        #expect(try Self.register(service, origin.base + "/orbit.gif").status == 200)
        #expect(try service.client.get("/frames/\(id)/3").status == 200)
        // The request asked for identity and sent no credentials or cookies.
        let head = try #require(origin.heads.first).lowercased()
        #expect(head.contains("accept-encoding: identity"))
        #expect(!head.contains("authorization") && !head.contains("cookie"))
        // The record keeps the source and its validators.
        let record = try #require(service.server.store.record(id))
        #expect(record.origin?.url == origin.base + "/orbit.gif" && record.origin?.etag == "\"v1\"")
        // By name, and with the URL as a parameter.
        #expect(try Self.register(service, origin.base + "/orbit.gif", name: "from-url.gif").status == 201)
        let byQuery = try service.client.send(
            "POST", "/images?url=" + (origin.base + "/orbit.gif").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        #expect(byQuery.status == 200, "\(byQuery.text)")
        #expect(try service.metric("flipbook_source_fetches_total", where: "result=\"ok\"") == 4)
    }

    @Test func malformedRegistrationsAre400() async throws {
        let service = try Self.service()
        defer { Task { await service.stop() } }
        let json = ["Content-Type": "application/json"]
        #expect(try service.client.send("POST", "/images", headers: json, body: Array("{".utf8)).status == 400)
        #expect(try service.client.send("POST", "/images", headers: json, body: Array("{\"uri\":\"x\"}".utf8)).status == 400)
        #expect(
            try service.client.send(
                "POST", "/images?url=http://a.example/", headers: json, body: Array("{\"url\":\"http://b.example/\"}".utf8)
            ).status == 400)
    }

    @Test func redirectsAreFollowedAndCounted() async throws {
        let origin = try OriginServer()
        defer { origin.stop() }
        origin.set("/a", .answer(status: 302, headers: ["Location: /b"], body: []))
        origin.set("/b", .answer(status: 301, headers: ["Location: \(origin.base)/c"], body: []))
        origin.set("/c", .answer(status: 307, headers: ["Location: d.gif"], body: []))
        origin.set("/d.gif", .answer(status: 200, headers: [], body: Self.gif))
        origin.set("/loop", .answer(status: 302, headers: ["Location: /loop"], body: []))
        let service = try Self.service()
        defer { Task { await service.stop() } }
        let three = try Self.register(service, origin.base + "/a")
        #expect(three.status == 201, "\(three.text)")
        let loop = try Self.register(service, origin.base + "/loop")
        #expect(loop.status == 422 && loop.text.contains("too-many-redirects"), "\(loop.text)")
        #expect(origin.heads.filter { $0.hasPrefix("GET /loop") }.count == 4, "the first request and 3 redirects")
    }

    @Test func aRedirectToARefusedAddressNeverConnects() async throws {
        let inside = try OriginServer(
            address: "127.0.0.2", routes: ["/secret.gif": .answer(status: 200, headers: [], body: Self.gif)])
        defer { inside.stop() }
        let origin = try OriginServer()
        defer { origin.stop() }
        let resolver = StaticResolver(["inside.test": [.v4(0x7f00_0002)]])
        for (path, target) in [
            ("/r1", inside.base + "/secret.gif"), ("/r2", "http://inside.test:\(inside.port)/secret.gif"),
            ("/r3", "http://0x7f.0.0.2:\(inside.port)/secret.gif"), ("/r4", "http://2130706434:\(inside.port)/secret.gif"),
            ("/r5", "http://[::ffff:127.0.0.2]:\(inside.port)/secret.gif"), ("/r6", "ftp://127.0.0.2/secret.gif"),
            ("/r7", "http://user@127.0.0.1:\(origin.port)/x.gif"),
        ] {
            origin.set(path, .answer(status: 302, headers: ["Location: \(target)"], body: []))
        }
        let service = try Self.service(resolver: resolver)
        defer { Task { await service.stop() } }
        for path in ["/r1", "/r2", "/r3", "/r4", "/r5", "/r6", "/r7"] {
            let answer = try Self.register(service, origin.base + path)
            #expect(answer.status == 422, "\(path): \(answer.status) \(answer.text)")
            #expect(!answer.text.contains("127.0.0.2"), "the detail names the rule, not the address")
        }
        #expect(inside.connections == 0)
    }

    @Test func anAnnouncedOversizedBodyIsRefusedAndAStreamedOneIsCutAtTheLimit() async throws {
        let origin = try OriginServer(routes: [
            "/announced": .stream(total: 8 << 20, contentLength: true),
            "/streamed": .stream(total: 64 << 20, contentLength: false),
        ])
        defer { origin.stop() }
        let service = try Self.service { $0.sources.maxBytes = 256 * 1024 }
        defer { Task { await service.stop() } }
        let announced = try Self.register(service, origin.base + "/announced")
        #expect(announced.status == 422 && announced.text.contains("too-large"), "\(announced.text)")
        let streamed = try Self.register(service, origin.base + "/streamed")
        #expect(streamed.status == 422 && streamed.text.contains("too-large"), "\(streamed.text)")
        // The origin saw the connection closed long before its 64 MiB were sent.
        for _ in 0..<100 where !origin.cutShort { usleep(50_000) }
        #expect(origin.cutShort)
        #expect(origin.bytesSent < 16 << 20, "sent \(origin.bytesSent)")
        #expect(try service.metric("flipbook_source_fetches_total", where: "result=\"too-large\"") == 2)
    }

    @Test func aSlowOriginIsDroppedAtTheDeadline() async throws {
        let origin = try OriginServer(routes: ["/slow.gif": .slow(seconds: 4, then: Self.gif)])
        defer { origin.stop() }
        let service = try Self.service { $0.sources.timeoutSeconds = 1 }
        defer { Task { await service.stop() } }
        let started = Date()
        let answer = try Self.register(service, origin.base + "/slow.gif")
        #expect(answer.status == 504, "\(answer.text)")
        #expect(Date().timeIntervalSince(started) < 3.5)
    }

    @Test func anEncodedAnswerIsRefused() async throws {
        let origin = try OriginServer(routes: [
            "/gz.gif": .answer(status: 200, headers: ["Content-Encoding: gzip"], body: Self.gif),
            "/text": .answer(status: 200, headers: [], body: Array("not an image".utf8)),
            "/empty": .answer(status: 200, headers: [], body: []),
        ])
        defer { origin.stop() }
        let service = try Self.service()
        defer { Task { await service.stop() } }
        let gzip = try Self.register(service, origin.base + "/gz.gif")
        #expect(gzip.status == 422 && gzip.text.contains("content-encoding"), "\(gzip.text)")
        #expect(try Self.register(service, origin.base + "/text").status == 415, "sniffed, not trusted")
        #expect(try Self.register(service, origin.base + "/empty").status == 422)
    }

    @Test func unreachableAndFailingOriginsAre502() async throws {
        let closed = try BoundLoopbackPort()  // bound, not listening: connections are refused
        let origin = try OriginServer()
        defer { origin.stop() }
        let service = try Self.service(resolver: StaticResolver([:]))
        defer { Task { await service.stop() } }
        #expect(try Self.register(service, "http://127.0.0.1:\(closed.port)/a.gif").status == 502)
        #expect(try Self.register(service, origin.base + "/missing.gif").status == 502)
        #expect(try Self.register(service, "http://no-such-host.test/a.gif").status == 502)
        #expect(try service.metric("flipbook_source_fetches_total", where: "result=\"unreachable\"") == 2)
    }

    @Test func refreshSecondsRevalidatesInTheBackground() async throws {
        let origin = try OriginServer(routes: ["/clip": .answer(status: 200, headers: ["ETag: \"v1\""], body: Self.gif)])
        defer { origin.stop() }
        let service = try Self.service { $0.sources.refreshSeconds = 0.2 }
        defer { Task { await service.stop() } }
        #expect(try Self.register(service, origin.base + "/clip", name: "clip").status == 201)
        origin.set("/clip", .answer(status: 200, headers: ["ETag: \"v2\""], body: Self.webp))
        #expect(Self.json(try service.client.get("/images/clip"))["format"] as? String == "gif", "not due yet")
        try await Task.sleep(for: .milliseconds(300))
        _ = try service.client.get("/images/clip")  // due: revalidated in the background
        for _ in 0..<100 where service.server.store.record("clip")?.origin?.etag != "\"v2\"" {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(origin.heads.last?.contains("If-None-Match: \"v1\"") == true)
        #expect(Self.json(try service.client.get("/images/clip"))["format"] as? String == "webp")
    }

    @Test func refreshRevalidatesAndMovesANameToNewBytes() async throws {
        let origin = try OriginServer(routes: [
            "/clip": .answer(status: 200, headers: ["ETag: \"v1\""], body: Self.gif)
        ])
        defer { origin.stop() }
        let service = try Self.service()
        defer { Task { await service.stop() } }
        #expect(try Self.register(service, origin.base + "/clip", name: "clip").status == 201)
        origin.set("/clip", .answer(status: 304, headers: ["ETag: \"v1\""], body: []))
        let unchanged = try service.client.send("POST", "/images/clip/refresh")
        #expect(unchanged.status == 200, "\(unchanged.text)")
        #expect(origin.heads.last?.contains("If-None-Match: \"v1\"") == true)
        #expect(Self.json(unchanged)["format"] as? String == "gif")
        origin.set("/clip", .answer(status: 200, headers: ["ETag: \"v2\""], body: Self.webp))
        let moved = try service.client.send("POST", "/images/clip/refresh")
        #expect(moved.status == 200, "\(moved.text)")
        #expect(Self.json(try service.client.get("/images/clip"))["format"] as? String == "webp")
        #expect(service.server.store.record("clip")?.origin?.etag == "\"v2\"")
        // A content id's new bytes are a new content id.
        #expect(try Self.register(service, origin.base + "/clip").status == 201)
        origin.set("/clip", .answer(status: 200, headers: ["ETag: \"v3\""], body: Self.gif))
        let fresh = try service.client.send("POST", "/images/\(Self.sha256(Self.webp))/refresh")
        #expect(fresh.status == 201 || fresh.status == 200, "\(fresh.text)")
        #expect(Self.json(fresh)["id"] as? String == Self.sha256(Self.gif))
        #expect(try service.client.send("POST", "/images/nothing/refresh").status == 404)
        #expect(try service.client.send("POST", "/images/\(Self.sha256(Self.gif))/refresh").status != 409)
    }
}
