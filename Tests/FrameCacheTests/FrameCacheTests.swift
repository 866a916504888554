import AnimatedImage
import FlipbookTestSupport
import Foundation
import SystemResources
import Testing

@testable import FrameCache

@Suite("Frame cache", .serialized, .ownThreads)
struct FrameCacheTests {
    func cache(
        budget: Int, threads: Int = 2, clock: any MonotonicClock = SystemMonotonicClock(),
        wholeAnimationBytes: Int = 10_000_000
    ) -> FrameCache {
        FrameCache(
            configuration: FrameCacheConfiguration(
                budgetBytes: budget, decodeThreads: threads,
                window: WindowPolicy(wholeAnimationBytes: wholeAnimationBytes, minimumWindow: 2)), clock: clock)
    }

    /// What the cache sets aside from its budget for `threads` decode threads working on `image`.
    func workingReserve(_ image: AnimatedImage, threads: Int) -> Int {
        threads * CachePolicy.Tuning().workingCanvasesPerThread * image.index.bytesPerFrame
    }

    @Test func framesAreTheRendererFrames() throws {
        let image = try TestImages.medium()
        let cache = cache(budget: 64 << 20)
        defer { cache.shutdown() }
        let renderer = FrameRenderer(image: image)
        let entry = CacheableImage(id: "m", image: image)
        for k in [0, 5, 41, 3] {
            let (_, frame) = cache.fetch(entry, k)
            #expect(frame?.index == k)
            #expect(frame?.png == (try PNGEncoder().encode(renderer.render(k))))
        }
    }

    @Test func sequentialPlaybackLargerThanTheWindowHitsAfterTheFirstFrame() throws {
        let image = try TestImages.medium()
        // Only ~12 encoded frames fit: the window is far smaller than the 42-frame animation.
        let frameSize = try TestImages.largestEncodedFrame(of: image)
        let cache = cache(
            budget: workingReserve(image, threads: 2) + frameSize * 12 + image.index.bytesPerFrame * 3,
            wholeAnimationBytes: 0)
        defer { cache.shutdown() }
        let entry = CacheableImage(id: "long", image: image)
        var hits = 0
        for loop in 0..<2 {
            for k in 0..<image.frameCount {
                let (hit, frame) = cache.fetch(entry, k)
                #expect(frame != nil)
                if hit { hits += 1 } else if loop > 0 || k > 0 { print("miss at \(k)") }
                cache.waitUntilIdle()  // the time a player waits between frames
            }
        }
        let requests = 2 * image.frameCount - 1
        let stats = cache.stats()
        #expect(stats.images[0].window < image.frameCount)
        #expect(Double(hits) / Double(requests) >= 0.99, "\(hits) hits of \(requests)")
        #expect(stats.workingReserveBytes == workingReserve(image, threads: 2))
        #expect(stats.usedBytes <= stats.budgetBytes - stats.workingReserveBytes)
    }

    @Test func smallAnimationsAreCachedWhole() throws {
        let image = try TestImages.small()
        let cache = cache(budget: 64 << 20)
        defer { cache.shutdown() }
        let entry = CacheableImage(id: "small", image: image)
        _ = cache.fetch(entry, 0)
        cache.waitUntilIdle()
        let stats = cache.stats()
        #expect(stats.images[0].window == image.frameCount)
        #expect(stats.images[0].cachedFrames == image.frameCount)
    }

    /// `/stats` lists only the most recently used entries (``CacheStats/listedImages``); its
    /// totals still count every entry.
    @Test func statsListTheMostRecentlyUsedEntriesAndCountThemAll() throws {
        let image = try TestImages.small()
        let cache = cache(budget: 64 << 20)
        defer { cache.shutdown() }
        for id in ["a", "b", "c"] {
            _ = cache.fetch(CacheableImage(id: id, image: image), 0)
            cache.waitUntilIdle()
        }
        let all = cache.stats()
        let listed = cache.stats(listing: 2)
        #expect(all.images.map(\.id) == ["c", "b", "a"], "the most recently used first")
        #expect(listed.images.map(\.id) == ["c", "b"])
        #expect(listed.entries == 3 && listed.cachedFrames == all.cachedFrames && listed.cachedFrames == 3 * image.frameCount)
        #expect(listed.frameBytes == all.images.reduce(0) { $0 + $1.frameBytes } && listed.frameBytes > 0)
        #expect(listed.decoderBytes == all.images.reduce(0) { $0 + $1.decoderBytes })
    }

    @Test func concurrentRequestsForOneColdFrameShareOneDecode() throws {
        let still = try TestImages.load("pygif/depth8.gif")
        #expect(still.frameCount == 1)
        let gate = DispatchSemaphore(value: 0)
        let entry = CacheableImage(
            id: "gated", frameCount: 1, canvasWidth: still.canvasWidth,
            canvasHeight: still.canvasHeight,
            load: {
                gate.wait(); return still
            })
        let cache = cache(budget: 64 << 20, threads: 2)
        defer { cache.shutdown() }
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 100) { _ in
            #expect(cache.frame(entry, index: 0, completion: results.completion) == nil)
        }
        gate.signal()
        let values = results.wait(for: 100)
        #expect(values.count == 100)
        let pngs = Set(values.compactMap { try? $0.get().png })
        #expect(pngs.count == 1)
        let stats = cache.stats()
        #expect(stats.decodes == 1)
        #expect(stats.coalesced == 99)
        #expect(stats.misses == 100)
    }

    @Test func theBudgetIsNeverExceededUnderARandomWorkload() throws {
        let images = [
            try TestImages.long(), try TestImages.medium(), try TestImages.small(),
            try TestImages.load("image-rs-image/images/png/apng/ball.png"),
            try TestImages.load("pillow/webp/iss634.webp"),
        ]
        let budget = 300_000
        let cache = cache(budget: budget, threads: 2, wholeAnimationBytes: 50_000)
        defer { cache.shutdown() }
        var generator = SplitMix64(seed: 20_261_123)
        var pending: [Results] = []
        for step in 0..<600 {
            let n = Int.random(in: 0..<images.count, using: &generator)
            let image = images[n]
            let entry = CacheableImage(id: "img\(n)", image: image)
            let results = Results()
            // A hit answers at once and never calls the completion; only misses are awaited.
            if cache.frame(
                entry, index: Int.random(in: 0..<image.frameCount, using: &generator),
                completion: results.completion) == nil
            {
                pending.append(results)
            }
            if step % 97 == 0 { cache.memoryPressure(step % 2 == 0 ? .warning : .critical, source: "test") }
            if step % 50 == 0 { cache.remove(id: "img\(Int.random(in: 0..<images.count, using: &generator))") }
            let stats = cache.stats()
            #expect(stats.usedBytes <= budget, "step \(step): \(stats.usedBytes) > \(budget)")
            #expect(stats.usedBytes == stats.frameBytes + stats.decoderBytes + stats.entryBytes)
        }
        // Patience, not speed: ~20 s of thrashing decodes alone, several times that on a loaded
        // machine (a 30 s wait ran out at load 15); a cache that never settles still fails.
        cache.waitUntilIdle(timeout: 300)
        let idle = cache.debugDescriptionOfWork()
        #expect(idle.isEmpty, "work left after waitUntilIdle: \(idle)")
        for results in pending { #expect(results.wait(for: 1).count == 1, "a waiting request was never answered") }
        let stats = cache.stats()
        #expect(stats.usedBytes <= budget)
        #expect(stats.usedBytes == stats.frameBytes + stats.decoderBytes + stats.entryBytes)
        #expect(stats.evictions > 0)
    }

    @Test func aBudgetTooSmallForOneFrameStillAnswers() throws {
        let image = try TestImages.medium()
        let cache = cache(budget: 100)
        defer { cache.shutdown() }
        let (_, frame) = cache.fetch(CacheableImage(id: "m", image: image), 7)
        #expect(frame?.png.isEmpty == false)
        cache.waitUntilIdle()
        #expect(cache.heldBytes <= 100)
    }

    @Test func evictionTakesFramesBehindThePlayheadFirstAndKeepsThePoster() throws {
        let image = try TestImages.medium()
        let frameSize = try TestImages.largestEncodedFrame(of: image)
        // A clock moved by hand, a frame's delay per request: when windows are worked out again
        // (and so what is made ahead and evicted) does not depend on how fast the machine is.
        let clock = ManualClock()
        let cache = cache(
            budget: workingReserve(image, threads: 1) + frameSize * 8 + image.index.bytesPerFrame * 2,
            threads: 1, clock: clock, wholeAnimationBytes: 0)
        defer { cache.shutdown() }
        let entry = CacheableImage(id: "long", image: image)
        for k in 0..<30 {
            _ = cache.fetch(entry, k)
            cache.waitUntilIdle()
            clock.advance(by: 0.04)
        }
        let stats = cache.stats()
        let info = stats.images[0]
        #expect(info.playhead == 29)
        #expect(info.window > 1 && info.window < image.frameCount - 1)
        #expect(stats.usedBytes <= stats.budgetBytes - stats.workingReserveBytes)
        // 30 frames were made for a budget of about 8: room was made many times over. The window
        // runs from the playhead on (wrapping to 0) and fills in playback order, so what is
        // cached of it is a run from the playhead, as far as the budget reached. Behind the
        // playhead, the frame played most recently went first (as the animation loops it is
        // needed again last) but for the resume anchor (below). The poster stays.
        #expect(stats.evictions > 10)
        let window = (0..<info.window).map { (29 + $0) % image.frameCount }
        let cached = cache.cachedFrameIndices(of: "long")
        let ahead = window.prefix { cached.contains($0) }
        #expect(ahead.count >= 2, "cached \(cached), window \(window)")
        #expect(
            window.dropFirst(ahead.count).allSatisfy { $0 == 0 || !cached.contains($0) }, "cached \(cached), window \(window)")
        #expect(cached.contains(0))
        // Behind the playhead: when room was last made (at some playhead P), eviction walked
        // back from P, keeping the anchor P − 1 and taking P − 2, P − 3, … as far as it needed,
        // so what is left is a run from frame 1 (needed soonest as the animation loops) and a
        // run up to the playhead (P − 1 and the window's frames since played), nothing between.
        // (Here the window needs nearly the whole budget, so the run from 1 is usually gone
        // too; the order itself is checked frame by frame in EvictionOrderTests.)
        let behind = cached.filter { $0 > 0 && $0 < 29 }.sorted()
        let fromOne = behind.enumerated().prefix { $0.element == $0.offset + 1 }.count
        let rest = Array(behind.dropFirst(fromOne))
        #expect(rest.isEmpty || rest == Array((29 - rest.count)..<29), "cached \(cached)")
        #expect(fromOne + rest.count < 28, "nothing was evicted behind the playhead: cached \(cached)")
    }

    @Test func queueFullIsRefusedWithRetryAfter() throws {
        let still = try TestImages.load("pygif/depth8.gif")
        let gate = DispatchSemaphore(value: 0)
        let cache = FrameCache(
            configuration: FrameCacheConfiguration(
                budgetBytes: 1 << 20, decodeThreads: 1,
                maxWaitingRequests: 3))
        defer { gate.signal(); cache.shutdown() }
        let results = Results()
        for n in 0..<4 {
            let entry = CacheableImage(
                id: "g\(n)", frameCount: 1, canvasWidth: 1, canvasHeight: 1,
                load: {
                    gate.wait(); return still
                })
            _ = cache.frame(entry, index: 0, completion: results.completion)
        }
        let refused = results.wait(for: 1)
        #expect(refused.first.map { if case .failure(.queueFull(1)) = $0 { return true } else { return false } } == true)
        gate.signal(); gate.signal(); gate.signal()
    }

    @Test func outOfRangeAndBrokenImages() throws {
        let image = try TestImages.small()
        let cache = cache(budget: 1 << 20)
        defer { cache.shutdown() }
        let results = Results()
        _ = cache.frame(CacheableImage(id: "s", image: image), index: 99, completion: results.completion)
        #expect(
            results.wait(for: 1).first.map { if case .failure(.frameOutOfRange(99, 15)) = $0 { true } else { false } } == true)
        let broken = CacheableImage(
            id: "broken", frameCount: 3, canvasWidth: 2, canvasHeight: 2,
            load: { throw AnimatedImageError.unsupportedFormat })
        let more = Results()
        _ = cache.frame(broken, index: 1, completion: more.completion)
        #expect(more.wait(for: 1).first.map { if case .failure(.loadFailed) = $0 { true } else { false } } == true)
    }

    @Test func removeDropsEverything() throws {
        let image = try TestImages.small()
        let cache = cache(budget: 1 << 20)
        defer { cache.shutdown() }
        _ = cache.fetch(CacheableImage(id: "s", image: image), 0)
        cache.waitUntilIdle()
        #expect(cache.heldBytes > 0)
        cache.remove(id: "s")
        #expect(cache.heldBytes == 0)
        #expect(cache.stats().entries == 0)
    }
}

/// Decoders whose canvas was evicted resume from a cached frame instead of replaying.
@Suite("Frame cache: resuming from cached frames", .serialized, .ownThreads)
struct ResumeTests {
    /// A checkpoint interval longer than the animation: only cached frames to resume from (the
    /// checkpoint allowance, a share of the budget, would otherwise let checkpoints in).
    static let noCheckpoints = 1_000

    @Test func twoPlayersSharingABudgetTooSmallForBothDecodersDoNotReplay() throws {
        let image = try TestImages.long()
        let frameSize = try TestImages.largestEncodedFrame(of: image)
        let canvas = image.index.bytesPerFrame
        // Room for one decoder (canvas and image) and a half, two entries and a few frames each
        // (besides the decode thread's working reserve): every switch of image evicts the other
        // image's decoder.
        let reserve = CachePolicy.Tuning().workingCanvasesPerThread * canvas
        let decoder = canvas + ImageSource.residentBytes(of: image, mappingBytes: ImageSource.mappingBytes(budget: 0))
        let entries = 2 * ImageEntry.overheadBytes(frameCount: image.frameCount, hitTables: 1)
        let cache = FrameCache(
            configuration: FrameCacheConfiguration(
                budgetBytes: reserve + decoder * 3 / 2 + entries + frameSize * 12, decodeThreads: 1,
                window: WindowPolicy(wholeAnimationBytes: 0, minimumWindow: 2, lookaheadMs: 0),
                checkpointInterval: Self.noCheckpoints))
        defer { cache.shutdown() }
        let reference = FrameRenderer(image: image)
        let players = [CacheableImage(id: "a", image: image), CacheableImage(id: "b", image: image)]
        for k in 0..<60 {
            for player in players {
                let (_, frame) = cache.fetch(player, k)
                #expect(frame?.png == (try PNGEncoder().encode(reference.render(k))), "frame \(k) of \(player.id)")
                cache.waitUntilIdle()
            }
        }
        let stats = cache.stats()
        print(
            "resume test: \(stats.decodes) decodes, \(stats.framesDecoded) frames decoded, \(stats.resumes) resumes, \(stats.evictions) evictions"
        )
        #expect(stats.workingReserveBytes == reserve)
        #expect(stats.usedBytes <= stats.budgetBytes - reserve)
        #expect(stats.resumes > 0)
        // Without resuming, every switch would replay from the last key frame.
        #expect(
            Double(stats.framesDecoded) <= Double(stats.decodes) * 1.05,
            "\(stats.framesDecoded) frame decodes for \(stats.decodes) frames")
    }

    @Test func withoutDecodeAheadTheFrameBehindThePlayheadIsKeptToResumeFrom() throws {
        let image = try TestImages.long()
        let frameSize = try TestImages.largestEncodedFrame(of: image)
        let canvas = image.index.bytesPerFrame
        // Windows of one frame (a memory warning, on a clock that does not move): nothing is
        // decoded ahead, every request waits, and the two players' decoders do not fit together.
        let reserve = CachePolicy.Tuning().workingCanvasesPerThread * canvas
        let decoder = canvas + ImageSource.residentBytes(of: image, mappingBytes: ImageSource.mappingBytes(budget: 0))
        let entries = 2 * ImageEntry.overheadBytes(frameCount: image.frameCount, hitTables: 1)
        let cache = FrameCache(
            configuration: FrameCacheConfiguration(
                budgetBytes: reserve + decoder * 3 / 2 + entries + frameSize * 6, decodeThreads: 1,
                window: WindowPolicy(wholeAnimationBytes: 0), checkpointInterval: Self.noCheckpoints),
            clock: ManualClock())
        defer { cache.shutdown() }
        cache.memoryPressure(.warning, source: "test")
        let players = [CacheableImage(id: "a", image: image), CacheableImage(id: "b", image: image)]
        for k in 0..<60 {
            for player in players {
                let (hit, frame) = cache.fetch(player, k)
                #expect(!hit && frame != nil)
                #expect(cache.cachedFrameIndices(of: player.id).contains(k), "frame \(k) of \(player.id) kept as the next anchor")
            }
        }
        let stats = cache.stats()
        #expect(stats.prefetches == 0)
        #expect(stats.usedBytes <= stats.budgetBytes)
        #expect(stats.resumes > 50)
        // Frame 1 of each player is made from frame 0 either way (a tie, so by replaying);
        // every later frame costs one decode.
        #expect(
            stats.framesDecoded <= stats.decodes + players.count,
            "\(stats.framesDecoded) frame decodes for \(stats.decodes) frames")
    }
}
