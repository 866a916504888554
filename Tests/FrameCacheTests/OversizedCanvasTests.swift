import AnimatedImage
import Dispatch
import FlipbookTestSupport
import Synchronization
import Testing

@testable import FrameCache

/// A canvas larger than the cache plans for (``CacheState/largestPlannedCanvas``, a quarter of
/// the budget) must not take the other images' windows while it is active, nor be kept as a
/// decoder that evicts their frames, and its jobs leave one decode thread to the other images.
@Suite("Frame cache: oversized canvases", .serialized, .ownThreads)
struct OversizedCanvasTests {
    @Test func anOversizedStillLeavesThePlayersWindowAndReserveAsTheyWere() throws {
        let player = try TestImages.medium()
        // 1200×1200: a 5.8 MB canvas, more than a quarter of the 4 MiB budget.
        let still = try AnimatedImage(bytes: DecodeMemoryBudgetTests.uniformGIF(side: 1200, color: 1))
        let budget = 4 << 20
        #expect(still.index.bytesPerFrame > budget / 4)
        #expect(player.index.bytesPerFrame <= budget / 4)
        // A clock that stands still: both images stay active however long the test takes.
        let cache = FrameCache(
            configuration: FrameCacheConfiguration(
                budgetBytes: budget, decodeThreads: 2,
                window: WindowPolicy(wholeAnimationBytes: 0, minimumWindow: 2)),
            clock: ManualClock())
        defer { cache.shutdown() }
        let playing = CacheableImage(id: "player", image: player)
        #expect(cache.fetch(playing, 0).frame != nil)
        cache.waitUntilIdle()
        let before = cache.stats()
        let window = try #require(before.images.first { $0.id == "player" }).window
        let cachedBefore = try #require(before.images.first { $0.id == "player" }).cachedFrames
        #expect(window > 2, "the player's window is wider than the minimum to begin with")
        #expect(before.workingReserveBytes == 2 * CachePolicy.Tuning().workingCanvasesPerThread * player.index.bytesPerFrame)

        let (_, frame) = cache.fetch(CacheableImage(id: "still", image: still), 0)
        #expect(frame?.png.starts(with: [0x89, 0x50, 0x4E, 0x47]) == true)
        cache.waitUntilIdle()
        // Windows are worked out again on the next request once the still's first frame has
        // replaced the guess its window was sized by (a quarter of its canvas).
        #expect(cache.fetch(playing, 0).hit)
        cache.waitUntilIdle()
        let after = cache.stats()
        let stillStats = try #require(after.images.first { $0.id == "still" })
        let playerStats = try #require(after.images.first { $0.id == "player" })
        // Both are active: the still was just asked for, the player moments ago.
        #expect(stillStats.cachedFrames == 1)
        #expect(stillStats.decoderBytes == 0, "the oversized decoder was kept")
        #expect(after.workingReserveBytes == before.workingReserveBytes)
        // The still's own frame takes its share (a frame or two of the player's); planning for
        // its canvas took every window down to the minimum and evicted the frames outside.
        #expect(playerStats.window > window / 2, "the player's window went from \(window) to \(playerStats.window)")
        #expect(
            playerStats.cachedFrames > cachedBefore / 2,
            "the still's decode evicted the player's frames: \(cachedBefore) → \(playerStats.cachedFrames)")
        #expect(after.usedBytes <= after.budgetBytes - after.workingReserveBytes)
    }

    @Test func aSmallImagesMissIsServedWhileLargeJobsHoldAllButOneThread() throws {
        let budget = 4 << 20
        let bytes = DecodeMemoryBudgetTests.uniformGIF(side: 1200, color: 2)
        let started = Mutex<[String]>([])
        let gate = DispatchSemaphore(value: 0)
        // A large still whose job holds its decode thread (in its load) until the gate opens.
        func large(_ id: String) -> CacheableImage {
            CacheableImage(
                id: id, frameCount: 1, canvasWidth: 1200, canvasHeight: 1200,
                load: {
                    started.withLock { $0.append(id) }
                    gate.wait()
                    return try AnimatedImage(bytes: bytes)
                })
        }
        #expect(1200 * 1200 * 4 > budget / 4)
        let cache = FrameCache(
            configuration: FrameCacheConfiguration(
                budgetBytes: budget, decodeThreads: 2,
                window: WindowPolicy(wholeAnimationBytes: 0, minimumWindow: 1)),
            clock: ManualClock())
        defer {
            gate.signal()
            gate.signal()
            cache.shutdown()
        }
        let first = Results()
        let second = Results()
        let small = Results()
        #expect(cache.frame(large("large-1"), index: 0, completion: first.completion) == nil)
        #expect(DecodeMemoryBudgetTests.eventually { started.withLock { $0 } == ["large-1"] })
        // Asked for before the small image: without the lane it would take the other thread.
        #expect(cache.frame(large("large-2"), index: 0, completion: second.completion) == nil)
        let image = try TestImages.small()
        #expect(cache.frame(CacheableImage(id: "small", image: image), index: 0, completion: small.completion) == nil)
        let answers = small.wait(for: 1)
        #expect(answers.count == 1)
        #expect((try? answers.first?.get())?.index == 0)
        // The small frame came while the first large job still held its thread, and the second
        // had not started.
        #expect(started.withLock { $0 } == ["large-1"])
        #expect(second.wait(for: 1, timeout: 0).isEmpty)
        gate.signal()
        gate.signal()
        #expect((try? first.wait(for: 1).first?.get())?.index == 0)
        #expect((try? second.wait(for: 1).first?.get())?.index == 0)
        #expect(started.withLock { $0 } == ["large-1", "large-2"])
    }
}
