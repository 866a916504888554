import AnimatedImage
import FlipbookTestSupport
import Foundation
import Testing

@testable import FrameCache

/// Frames staged before their image has an id (an upload in progress): shared while staged,
/// adopted as the stored image's frames without a decode, first to go when room is needed, gone
/// with every purge and with their owner.
@Suite("Staged frames", .ownThreads)
struct StagedFramesTests {
    func cache(budget: Int) -> FrameCache {
        FrameCache(
            configuration: FrameCacheConfiguration(
                budgetBytes: budget, decodeThreads: 1, window: WindowPolicy(wholeAnimationBytes: 0, minimumWindow: 2)))
    }

    @Test func adoptedFramesAreHitsWithTheirBytes() throws {
        let image = try TestImages.small()
        let cache = cache(budget: 16 << 20)
        defer { cache.shutdown() }
        let renderer = FrameRenderer(image: image)
        let full = FrameRendition.exact(width: image.canvasWidth, height: image.canvasHeight)
        var pngs: [[UInt8]] = []
        for k in 0..<4 {
            let png = try PNGEncoder().encode(renderer.render(k), colorSpace: image.colorSpace)
            pngs.append(png)
            #expect(cache.stage(png, owner: "upload", rendition: full, index: k).array == png)
        }
        #expect(cache.stagedFrame(owner: "upload", rendition: full, index: 2)?.array == pngs[2])
        #expect(cache.stagedFrame(owner: "other", rendition: full, index: 2) == nil)
        #expect(cache.stats().stagedFrames == 4)

        let prepared = Counter()
        let adopted = cache.adoptStaged(owner: "upload") { rendition in
            var target = CacheableImage(id: "sha", image: image, rendition: rendition)
            target.prepare = { _, _ in
                prepared.add()
                return nil
            }
            return target
        }
        #expect(adopted == 4 && prepared.value == 4)
        #expect(cache.stagedFrame(owner: "upload", rendition: full, index: 2) == nil)
        #expect(cache.residency(of: "sha")?.cachedFrames == [0, 1, 2, 3])
        // Adopting is not asking: nothing is decoded ahead until someone asks.
        cache.waitUntilIdle()
        #expect(cache.stats().decodes == 0)
        for k in 0..<4 {
            let (hit, frame) = cache.fetch(CacheableImage(id: "sha", image: image), k)
            #expect(hit && frame?.png == pngs[k], "frame \(k)")
        }
        let stats = cache.stats()
        #expect(stats.adopted == 4 && stats.stagedFrames == 0 && stats.stagedBytes == 0 && stats.misses == 0)
    }

    @Test func stagedFramesGoFirstWhenRoomIsNeededAndWithPurgesAndTheirOwner() throws {
        let image = try TestImages.medium()
        let budget = 4 << 20
        let cache = cache(budget: budget)
        defer { cache.shutdown() }
        let rendition = FrameRendition.exact(width: 1, height: 1)
        let frame = [UInt8](repeating: 7, count: 100_000)
        for k in 0..<60 { cache.stage(frame, owner: "upload", rendition: rendition, index: k) }
        let full = cache.stats()
        #expect(full.stagedFrames > 10 && full.stagedFrames < 60, "the budget bounds what is staged")
        #expect(full.usedBytes <= budget && full.evictions == 60 - full.stagedFrames)
        // The earliest went to make room for the latest.
        #expect(cache.stagedFrame(owner: "upload", rendition: rendition, index: 59) != nil)
        #expect(cache.stagedFrame(owner: "upload", rendition: rendition, index: 0) == nil)

        // An image being played takes the room the staged frames held.
        let entry = CacheableImage(id: "played", image: image)
        for k in 0..<8 {
            #expect(cache.fetch(entry, k).frame != nil)
            cache.waitUntilIdle()
        }
        let played = cache.stats()
        #expect(played.stagedFrames < full.stagedFrames)
        #expect(played.usedBytes <= budget)
        #expect(cache.residency(of: "played")?.cachedFrames.count ?? 0 >= 8)

        cache.memoryPressure(.warning, source: "test")
        #expect(cache.stats().stagedFrames == 0 && cache.stats().stagedBytes == 0)

        cache.stage(frame, owner: "gone", rendition: rendition, index: 0)
        #expect(cache.stats().stagedFrames == 1)
        cache.discardStaged(owner: "gone")
        #expect(cache.stats().stagedFrames == 0 && cache.stats().stagedBytes == 0)
        #expect(cache.adoptStaged(owner: "gone") { _ in entry } == 0)
    }
}

/// Counts calls from any thread.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
