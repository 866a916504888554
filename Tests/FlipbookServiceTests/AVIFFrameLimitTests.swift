import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// `limits.avifFramesPerClient`: a client with that many AVIF frames being encoded is answered
/// 429 with `Retry-After` for one more, while other clients, its WebP frames and AVIF frames
/// already cached are served; clients are told apart by their address, or by `X-Forwarded-For`
/// behind a trusted proxy.
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
