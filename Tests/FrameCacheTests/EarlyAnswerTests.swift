import AnimatedImage
import Foundation
import Testing

@testable import FrameCache

/// A composite is encoded for every rendition that wants it; each rendition's waiting requests
/// are answered when its own encode is done, not when the slowest encode of the composite is
/// (a 160-px PNG player does not wait for the 560-px lossless WebP made beside it).
@Suite("Frame cache: each rendition answered as soon as it is encoded", .serialized)
struct EarlyAnswerTests {
    func gated(
        _ image: AnimatedImage, width: Int, gate: DispatchSemaphore, prepare: (@Sendable () -> Void)? = nil
    ) throws -> CacheableImage {
        let rendition = try RenditionRequest(width: width, format: .png, quality: nil)
            .rendition(canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: 4096)
        return CacheableImage.gated(image, rendition, by: gate, prepare: prepare)
    }

    @Test func aRenditionIsAnsweredWhileAnotherOfTheSameCompositeIsStillEncoding() throws {
        let image = try TestImages.medium()
        // One decode thread and one encode lane: the composite's encodes run one after another.
        var configuration = FrameCacheConfiguration(budgetBytes: 64 << 20, decodeThreads: 1)
        configuration.encodeThreadsPerFrame = 1
        let cache = FrameCache(configuration: configuration)
        defer { cache.shutdown() }
        let gate = DispatchSemaphore(value: 0)
        let slowEncodeMayEnd = DispatchSemaphore(value: 0)
        let fast = try gated(image, width: 60, gate: gate)
        let slow = try gated(image, width: 120, gate: gate) { slowEncodeMayEnd.wait() }
        let fastResults = Results()
        let slowResults = Results()
        // The first request makes the job; the second rendition shares its composite.
        #expect(cache.frame(fast, index: 3, completion: fastResults.completion) == nil)
        #expect(cache.frame(slow, index: 3, completion: slowResults.completion) == nil)
        gate.signal()
        let fastValues = fastResults.wait(for: 1, timeout: 20)
        #expect(fastValues.count == 1, "the 60-px frame waited for the 120-px encode of the same composite")
        #expect(slowResults.values.isEmpty, "the 120-px encode is held: its frame cannot be out yet")
        // A hit now: the early answer stored the frame too.
        #expect(cache.frame(fast, index: 3) { _ in } != nil)
        slowEncodeMayEnd.signal()
        let slowValues = slowResults.wait(for: 1, timeout: 20)
        #expect(slowValues.count == 1)
        let renderer = FrameRenderer(image: image)
        for (request, values) in [(fast, fastValues), (slow, slowValues)] {
            let expected = try RenditionEncoder().encode(
                renderer.render(3), as: request.rendition, colorSpace: image.colorSpace)
            #expect((try? values.first?.get().png) == expected)
        }
        cache.waitUntilIdle()
        let stats = cache.stats()
        #expect(stats.renditions.sharedRenders == 1, "one composite for both renditions")
        #expect(stats.misses == 2)
    }
}
