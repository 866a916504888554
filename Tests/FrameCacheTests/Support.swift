import AnimatedImage
import FlipbookTestSupport
import Foundation
import FrameCache

/// Corpus animations used as cache workloads.
enum TestImages {
    static func load(_ path: String) throws -> AnimatedImage {
        try AnimatedImage(bytes: [UInt8](Data(contentsOf: Corpus.root.appendingPathComponent(path))))
    }

    /// 128 frames of 64×64 (16 KiB decoded each).
    static func long() throws -> AnimatedImage { try load("pillow/apng/blend_op_over_near_transparent.png") }
    /// The size of the largest frame of `image` as the cache encodes it.
    static func largestEncodedFrame(of image: AnimatedImage) throws -> Int {
        let renderer = FrameRenderer(image: image)
        return try (0..<image.frameCount).map { try PNGEncoder().encode(renderer.render($0), colorSpace: image.colorSpace).count }
            .max() ?? 0
    }

    /// 42 frames of 245×245 (about 40 KB each as PNG).
    static func medium() throws -> AnimatedImage { try load("pillow/gif/iss634.gif") }
    /// Two frames on a 1100×1000 canvas (4.4 MB decoded each).
    static func huge() throws -> AnimatedImage {
        var gif = GIFBuilder(width: 1100, height: 1000)
        gif.frames = (0..<2).map { _ in GIFBuilder.Frame(rect: (0, 0, 1, 1), indices: [1]) }
        return try AnimatedImage(bytes: gif.build())
    }
    /// 15 frames of 30×20.
    static func small() throws -> AnimatedImage { try load("wuffs/muybridge.gif") }
}

/// Collects the results of cache requests that complete later.
final class Results: @unchecked Sendable {
    private let condition = NSCondition()
    private(set) var values: [Result<EncodedFrame, FrameCacheError>] = []

    var completion: FrameCache.Completion {
        { result in
            self.condition.lock()
            self.values.append(result)
            self.condition.broadcast()
            self.condition.unlock()
        }
    }

    /// Waits for `count` results (at most `timeout` seconds); returns them.
    func wait(for count: Int, timeout: Double = 20) -> [Result<EncodedFrame, FrameCacheError>] {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while values.count < count, condition.wait(until: deadline) {}
        return values
    }
}

extension FrameCache {
    /// Asks for a frame and waits for it if it is not cached; true when it was a hit.
    func fetch(_ image: CacheableImage, _ index: Int) -> (hit: Bool, frame: EncodedFrame?) {
        let results = Results()
        if let frame = frame(image, index: index, completion: results.completion) { return (true, frame) }
        let values = results.wait(for: 1)
        return (false, try? values.first?.get())
    }
}

extension CacheableImage {
    /// `image` as "m" in `rendition`, whose file loads only once `gate` is signalled (requests made
    /// before that all wait); `prepare`, when given, runs as each of its frames is encoded.
    static func gated(
        _ image: AnimatedImage, _ rendition: FrameRendition, by gate: DispatchSemaphore,
        prepare: (@Sendable () -> Void)? = nil
    ) -> CacheableImage {
        var preparer: CacheableImage.Preparer? = nil
        if let prepare {
            preparer = { _, _ in
                prepare()
                return nil
            }
        }
        return CacheableImage(
            id: "m", frameCount: image.frameCount, canvasWidth: image.canvasWidth,
            canvasHeight: image.canvasHeight, rendition: rendition,
            load: {
                gate.wait()
                return image
            },
            prepare: preparer)
    }
}
