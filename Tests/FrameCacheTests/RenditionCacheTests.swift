import AnimatedImage
import FlipbookTestSupport
import Foundation
import Synchronization
import SystemResources
import Testing

@testable import FrameCache

/// Renditions in the one cache: keyed by (content, rendition, index), one decoder per image
/// feeding every rendition's encoder, the budget, pressure and coalescing across renditions, and
/// the bound on what a client cycling through sizes can make the cache hold.
@Suite("Renditions in the frame cache", .serialized, .ownThreads)
struct RenditionCacheTests {
    func cache(budget: Int, threads: Int = 2, decodeAhead: Int = 4) -> FrameCache {
        var configuration = FrameCacheConfiguration(
            budgetBytes: budget, decodeThreads: threads,
            window: WindowPolicy(wholeAnimationBytes: 10_000_000, minimumWindow: 2))
        configuration.decodeAheadRenditions = decodeAhead
        return FrameCache(configuration: configuration)
    }

    /// `image` scaled to `width` px wide (aspect kept), as `format`.
    func rendition(_ image: AnimatedImage, width: Int, format: FrameFormat = .png, quality: Int? = nil) throws
        -> FrameRendition
    {
        try RenditionRequest(width: width, format: format, quality: quality)
            .rendition(canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: 4096)
    }

    func cacheable(_ id: String, _ image: AnimatedImage, _ rendition: FrameRendition? = nil) -> CacheableImage {
        CacheableImage(id: id, image: image, rendition: rendition)
    }

    func gated(_ image: AnimatedImage, _ rendition: FrameRendition, by gate: DispatchSemaphore) -> CacheableImage {
        CacheableImage.gated(image, rendition, by: gate)
    }

    @Test func aRenditionsFramesAreTheScaledCompositeEncodedAsAsked() throws {
        let image = try TestImages.medium()
        let cache = cache(budget: 64 << 20)
        defer { cache.shutdown() }
        let small = try rendition(image, width: 100, format: .webp, quality: 70)
        let renderer = FrameRenderer(image: image)
        for k in [0, 7, 41] {
            let (_, frame) = cache.fetch(cacheable("m", image, small), k)
            let expected = try RenditionEncoder().encode(renderer.render(k), as: small, colorSpace: image.colorSpace)
            #expect(frame?.png == expected, "frame \(k)")
            #expect(frame?.png.starts(with: Array("RIFF".utf8)) == true)
        }
        // The full-size PNG is another entry of the same image, with today's bytes.
        let (_, full) = cache.fetch(cacheable("m", image), 7)
        #expect(full?.png == (try PNGEncoder().encode(renderer.render(7), colorSpace: image.colorSpace)))
        #expect(cache.stats().entries == 2)
    }

    @Test func twoRenditionsPlayedTogetherDecodeEachFrameOnce() throws {
        let image = try TestImages.medium()
        let cache = cache(budget: 256 << 20)
        defer { cache.shutdown() }
        // Both start playing together: each asks for frames 0, 1 and 2 (played from the third
        // frame in order) while the image is still loading, so neither is decoded ahead before
        // the other plays (had one raced ahead, the
        // other's first frames would be composited again, replaying from the key frame).
        let gate = DispatchSemaphore(value: 0)
        let a = gated(image, try rendition(image, width: 120), by: gate)
        let b = gated(image, try rendition(image, width: 80, format: .webp, quality: 80), by: gate)
        let results = Results()
        for (image, k) in [(a, 0), (b, 0), (a, 1), (b, 1), (a, 2), (b, 2)] {
            #expect(cache.frame(image, index: k, completion: results.completion) == nil)
        }
        gate.signal()
        #expect(results.wait(for: 6).allSatisfy { (try? $0.get()) != nil })
        cache.waitUntilIdle()
        // Decode-ahead ran for both; they play on.
        for k in 3..<image.frameCount {
            #expect(cache.fetch(a, k).frame != nil)
            #expect(cache.fetch(b, k).frame != nil)
        }
        cache.waitUntilIdle()
        let stats = cache.stats()
        // Each frame composited once (a few more at most, should a window's edge make one twice).
        #expect(stats.framesDecoded <= image.frameCount + 8, "\(stats.framesDecoded) decodes for \(image.frameCount) frames")
        #expect(stats.renditions.sharedRenders >= image.frameCount - 4, "\(stats.renditions)")
        #expect(stats.images.allSatisfy { $0.cachedFrames == image.frameCount })
        #expect(stats.images.filter { $0.decoderBytes > 0 }.count <= 1, "one decoder for the image")
    }

    @Test func concurrentRequestsCoalescePerRenditionAndShareOneComposite() throws {
        let image = try TestImages.medium()
        let gate = DispatchSemaphore(value: 0)
        let cache = cache(budget: 64 << 20, threads: 1)
        defer { cache.shutdown() }
        let a = gated(image, try rendition(image, width: 120), by: gate)
        let b = gated(image, try rendition(image, width: 60), by: gate)
        let results = Results()
        for image in [a, a, a, b, b, b] {
            #expect(cache.frame(image, index: 9, completion: results.completion) == nil)
        }
        gate.signal()
        let values = results.wait(for: 6)
        #expect(values.count == 6)
        let sizes = Set(values.compactMap { try? $0.get().png.count })
        #expect(sizes.count == 2, "one frame per rendition, each answered three times")
        let stats = cache.stats()
        #expect(stats.coalesced == 4)
        #expect(stats.renditions.sharedRenders >= 1, "the second rendition's frame came from the first's canvas")
        #expect(stats.framesDecoded <= 10, "frame 9 and the frames before it, composited once: \(stats.framesDecoded)")
    }

    @Test func oneCompositesEncodesRunOnSeveralThreadsAtOnce() throws {
        let image = try TestImages.medium()
        let gate = DispatchSemaphore(value: 0)
        for lanes in [1, 2] {
            var configuration = FrameCacheConfiguration(budgetBytes: 64 << 20, decodeThreads: 1)
            configuration.encodeThreadsPerFrame = lanes
            configuration.decodeBudget = DecodeMemoryBudget(capacityBytes: 256 << 20)
            let cache = FrameCache(configuration: configuration)
            defer { cache.shutdown() }
            let seen = EncodeThreads(meeting: lanes)
            func gated(_ width: Int) throws -> CacheableImage {
                CacheableImage.gated(image, try rendition(image, width: width), by: gate) { seen.enter() }
            }
            let renditions = try [120, 100, 80, 60].map(gated)
            let results = Results()
            for rendition in renditions {
                #expect(cache.frame(rendition, index: 3, completion: results.completion) == nil)
            }
            gate.signal()
            let values = results.wait(for: 4)
            // Every rendition's frame, each its own size, exactly as made one by one.
            let renderer = FrameRenderer(image: image)
            for (rendition, value) in zip(
                renditions, values.sorted { (try? $0.get().png.count) ?? 0 > (try? $1.get().png.count) ?? 0 })
            {
                let expected = try RenditionEncoder().encode(
                    renderer.render(3), as: rendition.rendition, colorSpace: image.colorSpace)
                #expect((try? value.get().png) == expected)
            }
            #expect(cache.stats().framesDecoded == 4, "one composite (frames 0–3) for the four renditions")
            // The cache's own helpers: as many lanes as configured, whatever else the process runs.
            #expect(seen.threads.count == lanes, "encodes of one composite on \(lanes) thread(s): \(seen.threads)")
            #expect(seen.threads.values.allSatisfy { $0 == Int(FrameCache.expectedDecodeThreadNice) }, "\(seen.threads)")
        }
    }

    @Test func theBudgetHoldsAcrossRenditions() throws {
        let image = try TestImages.medium()
        let budget = 6 << 20
        let cache = cache(budget: budget)
        defer { cache.shutdown() }
        let renditions = try [240, 200, 160, 120].map { cacheable("m", image, try rendition(image, width: $0)) }
        for k in 0..<image.frameCount {
            for r in renditions { #expect(cache.fetch(r, k).frame != nil) }
            let stats = cache.stats()
            #expect(stats.usedBytes <= budget - stats.workingReserveBytes, "frame \(k): \(stats.usedBytes)")
        }
    }

    @Test func onlyTheMostRecentlyPlayedFewAreDecodedAhead() async throws {
        let image = try TestImages.medium()
        let cache = cache(budget: 256 << 20, decodeAhead: 2)
        defer { cache.shutdown() }
        let renditions = try [200, 160, 120, 100].map { cacheable("m", image, try rendition(image, width: $0)) }
        for k in 0..<3 {
            for r in renditions { _ = cache.fetch(r, k) }
        }
        cache.waitUntilIdle()
        let stats = cache.stats()
        #expect(stats.renditions.decodeAhead == 2, "\(stats.renditions)")
        #expect(stats.renditions.onDemand == 2, "\(stats.renditions)")
        // The on-demand ones get nothing more decoded ahead for them.
        let onDemand = stats.images.filter { $0.window == 0 }
        #expect(onDemand.count == 2)
        try await Task.sleep(for: .milliseconds(600))
        cache.waitUntilIdle()
        let later = cache.stats().images.filter { $0.window == 0 }
        #expect(later.map(\.cachedFrames).sorted() == onDemand.map(\.cachedFrames).sorted())
        // A single request makes a rendition, not a player: it is never decoded ahead.
        _ = cache.fetch(cacheable("m", image, try rendition(image, width: 50)), 5)
        cache.waitUntilIdle()
        #expect(cache.stats().renditions.decodeAhead == 2)
    }

    @Test func aClientCyclingThroughSizesHoldsAtMostTheCapOfOneImage() throws {
        let image = try TestImages.medium()
        let cache = cache(budget: 64 << 20)
        defer { cache.shutdown() }
        _ = cache.fetch(cacheable("s", image), 0)
        for width in 1...(ImageSource.maxRenditions + 20) {
            #expect(cache.fetch(cacheable("s", image, try rendition(image, width: width)), 0).frame != nil)
        }
        let stats = cache.stats()
        #expect(stats.entries <= ImageSource.maxRenditions, "\(stats.entries) entries")
        #expect(stats.renditions.replaced >= 20)
        #expect(stats.images.contains { $0.rendition == "full" }, "the full-size frames stay")
    }

    @Test func aPlayedRenditionIsReplacedOnlyAfterThoseNeverPlayed() throws {
        let image = try TestImages.medium()
        let cache = cache(budget: 256 << 20, decodeAhead: 0)
        defer { cache.shutdown() }
        let played = cacheable("m", image, try rendition(image, width: 200))
        for k in 0..<3 { _ = cache.fetch(played, k) }
        for width in 1...(ImageSource.maxRenditions + 10) where width != 200 {
            _ = cache.fetch(cacheable("m", image, try rendition(image, width: width)), 7)
        }
        let held = try #require(cache.residency(of: played.key), "a played rendition outlives the cycling")
        #expect(held.cachedFrames.contains(0), "and keeps its poster, decoded ahead or not")
    }

    /// `image` 200 px wide, its first `frames` frames asked for in order (played: its playhead
    /// moved), once the cache is idle again.
    func play(_ cache: FrameCache, _ image: AnimatedImage, frames: Int) throws -> CacheableImage {
        let played = cacheable("m", image, try rendition(image, width: 200))
        for k in 0..<frames { #expect(cache.fetch(played, k).frame != nil) }
        cache.waitUntilIdle()
        return played
    }

    @Test func oneFrameAskedInSizeAfterSizeEvictsItselfNotAPlayedRendition() throws {
        let image = try TestImages.medium()
        let cache = cache(budget: 3 << 20, threads: 1, decodeAhead: 0)
        defer { cache.shutdown() }
        // Played, made on demand (no rendition is decoded ahead here), used before the others.
        let played = try play(cache, image, frames: 8)
        let kept = try #require(cache.residency(of: played.key)).cachedFrames
        #expect(Set(0..<8).isSubset(of: Set(kept)))
        // One frame in each of a hundred sizes: far more than the budget holds.
        for width in 140...240 where width != 200 {
            _ = cache.fetch(cacheable("m", image, try rendition(image, width: width)), width % image.frameCount)
        }
        cache.waitUntilIdle()
        let stats = cache.stats()
        #expect(stats.evictions > 0, "the sizes did not fill the budget")
        let after = try #require(cache.residency(of: played.key), "the played rendition is kept")
        #expect(Set(kept).isSubset(of: Set(after.cachedFrames)), "\(after.cachedFrames) of \(kept)")
    }

    @Test func aPlayersWaitingFrameGoesBeforeAOneOffRequestThatWaitedLonger() throws {
        let image = try TestImages.medium()
        // Nothing decoded ahead: the player's frame 4 (playing on from frame 2, two requests
        // having crossed) is not there when it asks.
        let cache = cache(budget: 64 << 20, threads: 1, decodeAhead: 0)
        defer { cache.shutdown() }
        let played = try play(cache, image, frames: 3)
        // The one decode thread is held by another image's load while both requests queue.
        let gate = DispatchSemaphore(value: 0)
        let other = CacheableImage(
            id: "g", frameCount: image.frameCount, canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight,
            load: {
                gate.wait()
                return image
            })
        let order = Mutex<[String]>([])
        let done = DispatchGroup()
        func note(_ name: String) -> FrameCache.Completion {
            done.enter()
            return { result in
                if (try? result.get()) != nil { order.withLock { $0.append(name) } }
                done.leave()
            }
        }
        #expect(cache.frame(other, index: 0, completion: note("other")) == nil)
        let oneOff = cacheable("m", image, try rendition(image, width: 60))
        #expect(cache.frame(oneOff, index: 30, completion: note("one-off")) == nil)
        #expect(cache.frame(played, index: 4, completion: note("player")) == nil)
        gate.signal()
        // Completions run after the cache's lock is let go: waiting until idle is not enough.
        #expect(done.wait(timeout: .now() + 30) == .success)
        let answered = order.withLock { $0 }
        #expect(answered.count == 3)
        #expect(answered.firstIndex(of: "player")! < answered.firstIndex(of: "one-off")!, "\(answered)")
    }

    @Test func pressureKeepsPostersOnlyOfRenditionsInUse() throws {
        let image = try TestImages.medium()
        let cache = cache(budget: 256 << 20, decodeAhead: 1)
        defer { cache.shutdown() }
        let played = cacheable("m", image, try rendition(image, width: 120))
        let once = cacheable("m", image, try rendition(image, width: 60))
        for k in 0..<4 { _ = cache.fetch(played, k) }
        _ = cache.fetch(once, 0)
        _ = cache.fetch(cacheable("m", image), 0)
        cache.waitUntilIdle()
        cache.memoryPressure(.warning, source: "test")
        #expect(cache.residency(of: played.key)?.cachedFrames.contains(0) == true, "a played rendition keeps its poster")
        #expect(cache.residency(of: "m")?.cachedFrames.contains(0) == true, "the full-size poster stays")
        #expect(cache.residency(of: once.key)?.cachedFrames.contains(0) != true, "an on-demand rendition's poster goes")
        cache.memoryPressure(.critical, source: "test")
        #expect(cache.residency(of: played.key)?.cachedFrames.count ?? 0 <= 1)
    }

    @Test func removingAnImageDropsEveryRenditionAndItsDecoder() throws {
        let image = try TestImages.medium()
        let cache = cache(budget: 64 << 20)
        defer { cache.shutdown() }
        for width in [200, 100] { _ = cache.fetch(cacheable("m", image, try rendition(image, width: width)), 3) }
        _ = cache.fetch(cacheable("m", image), 3)
        cache.waitUntilIdle()
        #expect(cache.heldBytes > 0)
        cache.remove(id: "m")
        #expect(cache.heldBytes == 0)
        #expect(cache.stats().entries == 0)
    }

    @Test func fullSizeRenditionsAreKeyedAsTheImageItself() throws {
        let image = try TestImages.small()
        let full = CacheableImage(id: "s", image: image, rendition: .exact(width: image.canvasWidth, height: image.canvasHeight))
        #expect(full.key == "s")
        let webp = CacheableImage(
            id: "s", image: image,
            rendition: FrameRendition(scaledWidth: image.canvasWidth, scaledHeight: image.canvasHeight, format: .webp))
        #expect(webp.key == "s/\(image.canvasWidth)x\(image.canvasHeight)-webp-ll")
    }
}

/// The threads that ran a test's encodes and their nice values. Each `prepare` call waits (up to
/// 5 s) until `meeting` threads have entered, so encodes that can overlap do, however loaded the
/// machine, and encodes that cannot (one lane) make the test fail, not pass slowly.
final class EncodeThreads: Sendable {
    private let seen = Mutex<[UInt: Int]>([:])
    private let meeting: Int

    init(meeting: Int) { self.meeting = meeting }

    func enter() {
        let nice = (try? DecodeThreadPriorityTests.threadNice()) ?? -100
        seen.withLock { $0[UInt(pthread_self())] = nice }
        let deadline = Date().addingTimeInterval(5)
        while seen.withLock({ $0.count }) < meeting && Date() < deadline { usleep(1_000) }
    }

    var threads: [UInt: Int] { seen.withLock { $0 } }
}
