import AnimatedImage
import FrameCache
import Foundation

/// A clock the test moves by hand.
final class ManualClock: CacheClock, @unchecked Sendable {
    private let lock = NSLock()
    private var seconds: Double = 1000

    func now() -> Double {
        lock.lock()
        defer { lock.unlock() }
        return seconds
    }

    func advance(_ delta: Double) {
        lock.lock()
        seconds += delta
        lock.unlock()
    }
}

/// Corpus animations used as cache workloads.
enum TestImages {
    static let corpus = URL(fileURLWithPath: ProcessInfo.processInfo.environment["FLIPBOOK_CORPUS"]
        ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/corpus").path)

    static func load(_ path: String) throws -> AnimatedImage {
        try AnimatedImage(bytes: [UInt8](Data(contentsOf: corpus.appendingPathComponent(path))))
    }

    /// 128 frames of 64×64 (16 KiB decoded each).
    static func long() throws -> AnimatedImage { try load("pillow/apng/blend_op_over_near_transparent.png") }
    /// The size of the largest frame of `image` as the cache encodes it.
    static func largestEncodedFrame(of image: AnimatedImage) throws -> Int {
        let renderer = FrameRenderer(image: image)
        return try (0..<image.frameCount).map { try PNGEncoder().encode(renderer.render($0), colorSpace: image.colorSpace).count }.max() ?? 0
    }

    /// 42 frames of 245×245 (about 40 KB each as PNG).
    static func medium() throws -> AnimatedImage { try load("pillow/gif/iss634.gif") }
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

/// SplitMix64: a seeded generator, so a randomized workload that fails can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
