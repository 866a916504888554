import AnimatedImage
import FlipbookTestSupport
import Foundation
import FrameCache
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// The decode-memory budget (`limits.maxDecodeBytes`) over HTTP: an image one decode of which
/// would need more than the whole budget is refused at upload with 422 naming the limit; an
/// upload whose verification must wait for memory waits, and beyond the waiting limit is
/// answered 429 with `Retry-After`; `/stats` and `/metrics` show the budget.
@Suite(.ownThreads) struct DecodeBudgetServiceTests {
    /// A still PNG of `width`×`height` (Flipbook's own encoder).
    static func png(width: Int, height: Int) throws -> [UInt8] {
        try PNGEncoder().encode(Canvas(width: width, height: height))
    }

    @Test func anImageLargerThanTheWholeBudgetIsRefusedAtUploadNamingTheLimit() async throws {
        let service = try TestService { $0.limits.decode.maxDecodeBytes = 16 << 20 }
        // 1024×1024: a render from cold needs about 17 MB (canvas, encode, scratch): refused.
        let large = try Self.png(width: 1024, height: 1024)
        let refused = try service.client.send("POST", "/images", body: large)
        #expect(refused.status == 422)
        #expect(refused.text.contains("maxDecodeBytes is 16777216"), "\(refused.text)")
        // 512×512 needs about a quarter of that: stored and served.
        let small = try service.client.send("POST", "/images", body: try Self.png(width: 512, height: 512))
        #expect(small.status == 201)
        let id = try #require(small.json["id"] as? String)
        #expect(try service.client.get("/frames/\(id)/0").status == 200)
        let budget = try #require(service.client.get("/stats").json["decodeMemory"] as? [String: Any])
        #expect(budget["capacityBytes"] as? Int == 16 << 20)
        #expect(budget["refusedTooLarge"] as? Int == 0)  // refused by the limit, before any reservation
        #expect((budget["reservations"] as? Int ?? 0) >= 2)  // the verification and the frame
        await service.stop()
    }

    @Test func anUploadWaitsForDecodeMemoryAndBeyondTheWaitingLimitIsAnswered429() async throws {
        let service = try TestService {
            $0.limits.decode.maxDecodeBytes = 64 << 20
            $0.cache.maxWaitingRequests = 1
        }
        let budget = service.server.decodeBudget
        // Something else holds the whole budget.
        let held = try budget.reserve(budget.capacityBytes)
        let first = try Self.png(width: 300, height: 200)
        let second = try Self.png(width: 200, height: 300)
        let client = service.client
        // A task that inherits the suite's own threads (a detached one ran its blocking send on
        // the cooperative pool, which a parallel test run can hold for longer than the wait below).
        let waiting = Task { try client.send("POST", "/images", body: first) }
        var queued = false
        for _ in 0..<2000 where !queued {  // bounded: fail rather than hang
            queued = budget.stats().waiting == 1
            if !queued { try await Task.sleep(nanoseconds: 5_000_000) }
        }
        #expect(queued, "the first upload's verification is not waiting for decode memory")
        let refused = try client.send("POST", "/images", body: second)
        #expect(refused.status == 429)
        #expect(refused.header("Retry-After") == "1")
        held.release()
        let stored = try await waiting.value
        #expect(stored.status == 201)
        let stats = budget.stats()
        #expect(stats.waits >= 1 && stats.refusedQueueFull == 1 && stats.usedBytes == 0)
        let metrics = try client.get("/metrics").text
        #expect(metrics.contains("flipbook_decode_memory_budget_bytes \(64 << 20)\n"))
        #expect(metrics.contains("flipbook_decode_memory_refused_total{reason=\"queue_full\"} 1\n"))
        await service.stop()
    }
}
