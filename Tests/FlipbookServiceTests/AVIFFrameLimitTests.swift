import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// `limits.avifFramesPerClient`: a client with that many AVIF frames being encoded is answered
/// 429 with `Retry-After` for one more, while other clients, its WebP frames and AVIF frames
/// already cached are served; clients are told apart by their address, or by `X-Forwarded-For`
/// behind a trusted proxy. An upload session's AVIF frames count as a stored image's do, a frame
/// waiting for its bytes included.
@Suite("AVIF frame encodes per client", .serialized, .ownThreads)
struct AVIFFrameLimitTests {
    static let path = "pillow/gif/iss634.gif"  // 245×245, 42 frames

    @Test func aClientBeyondItsEncodesIsAnswered429() async throws {
        try await TestService.withUpload(
            of: Self.path,
            configure: {
                $0.limits.avifFramesPerClient = 1
                $0.server.trustedProxies = ["127.0.0.1"]
            }
        ) { service, id in
            let limit = service.server.avifEncodes
            let (busy, other) = ("203.0.113.7", "198.51.100.9")
            // Another request of `busy` holds its one slot.
            #expect(limit.acquire(busy))
            let target = "/frames/\(id)/3?width=64&format=avif"
            let refused = try service.client.get(target, headers: ["X-Forwarded-For": busy])
            #expect(refused.status == 429, "\(refused.status) \(refused.text.prefix(200))")
            #expect(refused.header("Retry-After") == "1" && refused.text.contains("limits.avifFramesPerClient"))
            let served = try service.client.get(target, headers: ["X-Forwarded-For": other])
            #expect(served.status == 200 && served.header("Content-Type") == "image/avif", "\(served.status)")
            #expect(limit.held(by: other) == 0, "its slot is given back once the frame is made")
            let webp = try service.client.get("/frames/\(id)/4?width=64&format=webp", headers: ["X-Forwarded-For": busy])
            #expect(webp.status == 200, "a WebP frame takes no slot")
            let cached = try service.client.get(target, headers: ["X-Forwarded-For": busy])
            #expect(cached.status == 200 && cached.body == served.body, "a cached AVIF frame takes no slot")
            limit.release(busy)
            let later = try service.client.get("/frames/\(id)/20?width=64&format=avif", headers: ["X-Forwarded-For": busy])
            #expect(later.status == 200 && limit.held(by: busy) == 0)
        }
    }

    @Test func anUploadSessionsAVIFFramesAreCounted() async throws {
        let service = try UploadSessionTests.service {
            $0.limits.avifFramesPerClient = 1
            $0.server.trustedProxies = ["127.0.0.1"]
        }
        let limit = service.server.avifEncodes
        let (busy, other) = ("203.0.113.7", "198.51.100.9")
        let bytes = try Corpus.bytes(UploadSessionTests.gif)
        let id = try UploadSessionTests.createSession(service)
        let connection = try UploadSessionTests.startPut(service, id, length: bytes.count)
        try await UploadSessionTests.sendSlice(service, connection, id, bytes[0..<4000], total: 4000)
        let frames = try UploadSessionTests.progress(service, id).frames
        try #require(frames > 2 && frames < 15, "\(frames) frames in the first 4000 bytes")
        // A frame not in yet waits for its bytes holding `busy`'s one slot.
        let waiting = BackgroundRequest(
            service, "/frames/\(id)/\(frames)?width=64&format=avif", headers: ["X-Forwarded-For": busy, "Prefer": "wait=600"])
        try await UploadSessionTests.waitForWaiters(service, 1)
        #expect(limit.held(by: busy) == 1)
        let refused = try service.client.get("/frames/\(id)/0?width=64&format=avif", headers: ["X-Forwarded-For": busy])
        #expect(refused.status == 429, "\(refused.status) \(refused.text.prefix(200))")
        #expect(refused.header("Retry-After") == "1" && refused.text.contains("limits.avifFramesPerClient"))
        #expect(refused.header("Cache-Control") == "no-store")
        let served = try service.client.get("/frames/\(id)/0?width=64&format=avif", headers: ["X-Forwarded-For": other])
        #expect(served.status == 200 && served.header("Content-Type") == "image/avif", "\(served.status)")
        #expect(limit.held(by: other) == 0, "its slot is given back once the frame is made")
        let webp = try service.client.get("/frames/\(id)/1?width=64&format=webp", headers: ["X-Forwarded-For": busy])
        #expect(webp.status == 200, "a WebP frame takes no slot")
        // The bytes land: the waiting frame is made and its slot given back.
        try connection.send(Array(bytes[4000...]))
        #expect(try connection.readResponse().status == 201)
        let answered = try await waiting.answer()
        #expect(answered.status == 200 && answered.header("Content-Type") == "image/avif", "\(answered.status)")
        #expect(answered.header("X-Frame-Index") == String(frames))
        #expect(limit.held(by: busy) == 0)
        await service.stop()
    }

    @Test func slotsAreCountedPerClient() {
        let limit = ClientEncodeLimit(perClient: 2)
        #expect(limit.acquire("a") && limit.acquire("a") && !limit.acquire("a"))
        #expect(limit.acquire("b"))
        limit.release("a")
        #expect(limit.held(by: "a") == 1 && limit.acquire("a"))
        #expect(limit.acquire(nil), "a request without a known peer is not counted")
        let unlimited = ClientEncodeLimit(perClient: 0)
        #expect((0..<100).allSatisfy { _ in unlimited.acquire("a") } && unlimited.held(by: "a") == 0)
    }
}
