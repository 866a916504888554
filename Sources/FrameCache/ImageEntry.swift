import AnimatedImage

/// The cache's record of one image: its encoded frames, its decoder, its playhead and window,
/// and the requests waiting for it. Used only under the cache's lock (workers take the
/// renderer out while they decode, marked by `busy`).
final class ImageEntry {
    typealias Completion = @Sendable (Result<EncodedFrame, FrameCacheError>) -> Void

    let id: String
    let frameCount: Int
    let decodedFrameBytes: Int
    var load: @Sendable () throws -> AnimatedImage

    var image: AnimatedImage?
    var renderer: FrameRenderer?
    /// Bytes accounted for the renderer: its canvas and its checkpoints.
    var rendererBytes = 0

    var frames: [[UInt8]?]
    var frameBytes = 0
    var cachedCount = 0
    private var encodedTotal = 0
    private var encodedSamples = 0

    var playhead = 0
    var window = 1
    var lastRequest: Double
    var lastUse: UInt64

    /// Completions waiting per frame index, and the order frames were first asked for.
    var waiting: [Int: [Completion]] = [:]
    var waitOrder: [Int] = []

    /// A worker holds the renderer.
    var busy = false
    /// Set while busy when a purge wants the checkpoints gone.
    var discardCheckpointsAfterJob = false
    /// The decoder did not fit in the budget after its last job and was dropped: decoding ahead
    /// would replay from a key frame for every frame and throw the work away, so this image is
    /// served on demand until a job keeps its decoder again.
    var decoderDoesNotFit = false

    init(image: CacheableImage, now: Double, tick: UInt64) {
        id = image.id
        frameCount = image.frameCount
        decodedFrameBytes = image.canvasWidth * image.canvasHeight * 4
        load = image.load
        frames = Array(repeating: nil, count: max(0, image.frameCount))
        lastRequest = now
        lastUse = tick
    }

    var heldBytes: Int { frameBytes + rendererBytes }

    /// The average PNG size so far, or a guess (a quarter of the raw canvas) before any.
    var encodedFrameEstimate: Int {
        encodedSamples > 0 ? encodedTotal / encodedSamples : max(1, decodedFrameBytes / 4)
    }

    /// True when frame `i` lies in the window that starts at the playhead (wrapping).
    func inWindow(_ i: Int) -> Bool {
        frameCount > 0 && (i - playhead + frameCount) % frameCount < window
    }

    /// The first frame of the window that is neither cached nor waited for, if any.
    var nextPrefetch: Int? {
        guard frameCount > 0 else { return nil }
        for step in 0..<window {
            let i = (playhead + step) % frameCount
            if frames[i] == nil && waiting[i] == nil { return i }
        }
        return nil
    }

    @discardableResult
    func store(_ png: [UInt8], at i: Int) -> Int {
        guard frames[i] == nil else { return 0 }
        frames[i] = png
        frameBytes += png.count
        cachedCount += 1
        encodedTotal += png.count
        encodedSamples += 1
        return png.count
    }

    @discardableResult
    func drop(_ i: Int) -> Int {
        guard let png = frames[i] else { return 0 }
        frames[i] = nil
        frameBytes -= png.count
        cachedCount -= 1
        return png.count
    }

    func takeWaiters(for i: Int) -> [Completion] {
        waitOrder.removeAll { $0 == i }
        return waiting.removeValue(forKey: i) ?? []
    }

    func takeAllWaiters() -> [Completion] {
        waitOrder.removeAll()
        defer { waiting.removeAll() }
        return waiting.values.flatMap { $0 }
    }

    var waiterCount: Int { waiting.values.reduce(0) { $0 + $1.count } }
}
