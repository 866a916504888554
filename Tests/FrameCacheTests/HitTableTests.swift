import AnimatedImage
import Dispatch
import FlipbookTestSupport
import Foundation
import Synchronization
import SystemResources
import Testing

@testable import FrameCache

/// Hits answered through the event loops' hit tables, without the cache's lock: the same frames
/// and attachments as the locked path, the playhead and decode-ahead follow them, and what the
/// cache evicts, purges or removes leaves the tables.
@Suite("Frame cache: hits without the lock", .ownThreads)
struct HitTableTests {
    func cache(
        budget: Int, tables: Int = 2, wholeAnimationBytes: Int = 10_000_000,
        clock: any MonotonicClock = SystemMonotonicClock()
    ) -> FrameCache {
        var configuration = FrameCacheConfiguration(
            budgetBytes: budget, decodeThreads: 2,
            window: WindowPolicy(wholeAnimationBytes: wholeAnimationBytes, minimumWindow: 2))
        configuration.hitTables = tables
        return FrameCache(configuration: configuration, clock: clock)
    }

    /// An attachment that records which frame it was made for.
    final class Tag: FrameAttachment {
        let index: Int
        let byteCount = 100
        init(index: Int) { self.index = index }
    }

    static func tagging(_ image: AnimatedImage, id: String) -> CacheableImage {
        var cacheable = CacheableImage(id: id, image: image)
        cacheable.prepare = { index, _ in Tag(index: index) }
        return cacheable
    }

    @Test func aTableHitIsTheCachedFrameWithItsAttachment() throws {
        let image = try TestImages.small()
        let cache = cache(budget: 64 << 20)
        defer { cache.shutdown() }
        let entry = Self.tagging(image, id: "small")
        #expect(cache.cachedFrame(id: "small", index: 0, reader: 0) == nil, "not cached yet")
        _ = cache.fetch(entry, 0)
        cache.waitUntilIdle()
        let renderer = FrameRenderer(image: image)
        for k in 0..<image.frameCount {
            for reader in 0..<3 {  // reader 2 wraps to table 0
                let hit = try #require(cache.cachedFrame(id: "small", index: k, reader: reader))
                #expect(hit.png == (try PNGEncoder().encode(renderer.render(k))))
                #expect((hit.attachment as? Tag)?.index == k)
                let locked = try #require(cache.frame(entry, index: k) { _ in })
                #expect(locked.attachment === hit.attachment)
            }
        }
        #expect(cache.cachedFrame(id: "small", index: image.frameCount, reader: 0) == nil)
        #expect(cache.cachedFrame(id: "other", index: 0, reader: 0) == nil)
        let stats = cache.stats()
        #expect(stats.hits == 6 * image.frameCount)
        // The attachments are counted with the frames, which take whole pages of the memory file.
        #expect(cache.arena != nil)
        let page = FrameArena.pageSize
        let slotBytes = try (0..<image.frameCount).reduce(0) {
            $0 + (try PNGEncoder().encode(renderer.render($1)).count + page - 1) / page * page
        }
        #expect(stats.frameBytes == slotBytes + 100 * image.frameCount)
    }

    @Test func playbackThroughTheTablesKeepsDecodingAhead() throws {
        let image = try TestImages.medium()
        let frameSize = try TestImages.largestEncodedFrame(of: image)
        let reserve = 2 * CachePolicy.Tuning().workingCanvasesPerThread * image.index.bytesPerFrame
        // About 12 frames fit: the window is far smaller than the 42 frames, so decode-ahead must
        // follow the playhead the table hits move.
        let cache = cache(budget: reserve + frameSize * 12 + image.index.bytesPerFrame * 3, wholeAnimationBytes: 0)
        defer { cache.shutdown() }
        let entry = CacheableImage(id: "medium", image: image)
        var tableHits = 0
        var requests = 0
        for loop in 0..<2 {
            for k in 0..<image.frameCount where loop > 0 || k > 0 {
                requests += 1
                if let frame = cache.cachedFrame(id: "medium", index: k, reader: k % 2) {
                    #expect(frame.index == k)
                    tableHits += 1
                } else {
                    #expect(cache.fetch(entry, k).frame != nil)
                }
                cache.waitUntilIdle()  // the time a player waits between frames
                #expect(cache.residency(of: "medium")?.playhead == k)
            }
            if loop == 0 { _ = cache.fetch(entry, 0) }
        }
        let residency = try #require(cache.residency(of: "medium"))
        #expect(residency.window < image.frameCount)
        #expect(Double(tableHits) / Double(requests) >= 0.95, "\(tableHits) table hits of \(requests)")
        let stats = cache.stats()
        #expect(stats.usedBytes <= stats.budgetBytes - stats.workingReserveBytes)
    }

    /// Polls `condition` (a time bound only to fail instead of hang).
    func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    @Test func evictedPurgedAndRemovedFramesLeaveTheTables() throws {
        let clock = ManualClock()
        let image = try TestImages.small()
        let cache = cache(budget: 64 << 20, clock: clock)
        defer { cache.shutdown() }
        let entry = CacheableImage(id: "small", image: image)
        _ = cache.fetch(entry, 3)
        cache.waitUntilIdle()
        let tables = cache.hitTables
        #expect((0..<image.frameCount).allSatisfy { tables.holds("small", index: $0, reader: 1) })

        cache.memoryPressure(.critical, source: "test")
        for reader in 0..<2 {
            #expect(tables.holds("small", index: 0, reader: reader), "the poster stays")
            #expect(!(1..<image.frameCount).contains { tables.holds("small", index: $0, reader: reader) })
        }
        clock.advance(by: 10)  // the windows have regrown, but nobody asked for the image since
        cache.waitUntilIdle()
        #expect(cache.cachedFrameIndices(of: "small") == [0])
        // The poster asked for through a table: asked for since the purge, so decoded for again.
        #expect(cache.cachedFrame(id: "small", index: 0, reader: 0) != nil)
        cache.waitUntilIdle()
        #expect(eventually { cache.cachedFrameIndices(of: "small").count == image.frameCount })
        #expect(tables.holds("small", index: image.frameCount - 1, reader: 1))

        cache.remove(id: "small")
        for reader in 0..<2 {
            #expect(!(0..<image.frameCount).contains { tables.holds("small", index: $0, reader: reader) })
            #expect(cache.cachedFrame(id: "small", index: 0, reader: reader) == nil)
        }
    }

    @Test func aTableHitOnAnIdleImageMakesItActiveAgain() throws {
        let clock = ManualClock()
        let image = try TestImages.medium()
        let cache = cache(budget: 64 << 20, clock: clock)
        defer { cache.shutdown() }
        _ = cache.fetch(CacheableImage(id: "medium", image: image), 0)
        cache.waitUntilIdle()
        clock.advance(by: 60)  // idle: the decode threads' next look at the windows takes its window
        #expect(eventually { cache.residency(of: "medium")?.window == 0 })
        #expect(cache.cachedFrame(id: "medium", index: 1, reader: 0) != nil)
        #expect(eventually { (cache.residency(of: "medium")?.window ?? 0) > 0 })
    }

    @Test func concurrentTableHitsWhileTheCacheEvictsServeOnlyTheRightFrames() throws {
        let image = try TestImages.medium()
        let frameSize = try TestImages.largestEncodedFrame(of: image)
        let reserve = 2 * CachePolicy.Tuning().workingCanvasesPerThread * image.index.bytesPerFrame
        let cache = cache(
            budget: reserve + frameSize * 8 + image.index.bytesPerFrame * 3, tables: 4,
            wholeAnimationBytes: 0)
        defer { cache.shutdown() }
        let entry = Self.tagging(image, id: "medium")
        let renderer = FrameRenderer(image: image)
        let expected = try (0..<image.frameCount).map { try PNGEncoder().encode(renderer.render($0)) }
        let wrong = Atomic<Int>(0)
        let served = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 4) { reader in
            var generator = SplitMix64(seed: UInt64(reader + 1))
            for _ in 0..<400 {
                let k = Int.random(in: 0..<image.frameCount, using: &generator)
                var frame = cache.cachedFrame(id: "medium", index: k, reader: reader)
                if frame == nil {
                    // Decoded for this request; a loaded machine may take a while (the bound only
                    // keeps a lost answer from hanging the test).
                    let results = Results()
                    frame =
                        cache.frame(entry, index: k, completion: results.completion)
                        ?? (try? results.wait(for: 1, timeout: 300).first?.get())
                }
                if let frame {
                    served.wrappingAdd(1, ordering: .relaxed)
                    if frame.png != expected[k] || (frame.attachment as? Tag)?.index != k {
                        wrong.wrappingAdd(1, ordering: .relaxed)
                    }
                }
            }
        }
        cache.waitUntilIdle()
        #expect(served.load(ordering: .relaxed) == 1600)
        #expect(wrong.load(ordering: .relaxed) == 0)
        let stats = cache.stats()
        #expect(stats.usedBytes <= stats.budgetBytes - stats.workingReserveBytes)
        #expect(stats.evictions > 0, "the workload made the cache evict")
    }
}
