import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService
@testable import ImageStorage

/// What `/stats` and `/metrics` say of the image store: the files beside the frame cache and the
/// records kept in memory (the store itself: ImageStorageTests).
@Suite(.ownThreads) struct StoreStatsTests {
    @Test func statsReportTheFilesBesideTheCache() async throws {
        let service = try TestService()
        let id = try #require(try service.upload(Corpus.bytes("wuffs/muybridge.gif")).json["id"] as? String)
        #expect(try service.client.get("/frames/\(id)/3").status == 200)
        let stats = try service.client.get("/stats").json
        #expect(stats["budgetBytes"] as? Int == 64 << 20)
        let files = try #require(stats["files"] as? [String: Any])
        #expect(files["loaded"] as? Int == 1)
        #expect(files["loadedLimit"] as? Int == ImageStore.defaultMaxLoadedImages)
        #expect(files["mapped"] as? Int == 1)
        #expect(files["mappedBytes"] as? Int == (try Corpus.bytes("wuffs/muybridge.gif")).count)
        #expect(files["heapCopies"] as? Int == 0 && files["heapBytes"] as? Int == 0)
        await service.stop()
    }

    @Test func statsAndMetricsCountTheRecordCache() async throws {
        let service = try TestService { $0.storage.recordCacheBytes = 1 << 20 }
        for seed in UInt64(0)..<3 {
            #expect(try service.upload(TinyAnimations.gif(seed: seed)).status == 201)
        }
        let stats = try #require(try service.client.get("/stats").json["records"] as? [String: Any])
        #expect(stats["entries"] as? Int == 3)
        #expect(stats["maxBytes"] as? Int == 1 << 20)
        for key in ["bytes", "hits", "misses", "evictions"] { #expect(stats[key] is Int, "\(key)") }
        #expect(try service.metric("flipbook_record_cache_entries") == 3)
        #expect(try service.metric("flipbook_record_cache_max_bytes") == Double(1 << 20))
        await service.stop()
    }
}
