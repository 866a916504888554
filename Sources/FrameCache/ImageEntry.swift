import AnimatedImage
import Synchronization

/// The cache's record of one image: its encoded frames, its decoder, its playhead and window,
/// when its next frames will be wanted, and the requests waiting for it. Used under the cache's
/// lock (a worker takes the renderer out while it decodes, marked by `busy`) — except what the
/// hit path reads and writes without it (``FrameCache/cachedFrame(id:index:reader:)``): the
/// playhead and the time of the last request, and the flags that say whether a hit must take
/// the lock after all (active, busy, window, purge generation). Those are atomics; holders of
/// the lock read and write them like any other field. The frames themselves reach the hit path
/// through the hit tables (``HitTables``), which ``store(_:at:)`` and ``drop(_:)`` keep current.
final class ImageEntry: @unchecked Sendable {
    typealias Completion = @Sendable (Result<EncodedFrame, FrameCacheError>) -> Void

    let id: String
    let frameCount: Int
    /// RGBA bytes of one canvas.
    let decodedFrameBytes: Int
    let load: @Sendable () throws -> AnimatedImage
    /// Makes the attachment of each frame (``CacheableImage/prepare``).
    let prepare: CacheableImage.Preparer?
    /// The hit tables that mirror this entry's frames (nil for entries built by hand in tests).
    weak var hitTables: HitTables?

    /// The image (its file and index), kept while the entry is in use; the file's bytes are the
    /// store's (mapped), not the cache's, so they are not counted in the budget.
    var image: AnimatedImage? {
        didSet { if let image, timestampsMs == nil { learnTiming(image.timeline) } }
    }
    var renderer: FrameRenderer?
    /// Bytes accounted for the renderer: its canvas and its checkpoints.
    var rendererBytes = 0

    var frames: [CachedFrame?]
    var frameBytes = 0
    var cachedCount = 0
    private var encodedTotal = 0
    private var encodedSamples = 0

    /// The frame most recently asked for.
    var playhead: Int {
        get { atomicPlayhead.load(ordering: .relaxed) }
        set { atomicPlayhead.store(newValue, ordering: .relaxed) }
    }
    /// Frames kept and decoded ahead from the playhead (wrapping); 0 for an inactive image.
    var window: Int {
        get { atomicWindow.load(ordering: .relaxed) }
        set { atomicWindow.store(newValue, ordering: .relaxed) }
    }
    /// The window covers the whole animation because it fits (see ``WindowPolicy``).
    var isWhole = false
    /// Counted among the active images when windows were last worked out.
    var isListedActive: Bool {
        get { atomicListedActive.load(ordering: .relaxed) }
        set { atomicListedActive.store(newValue, ordering: .relaxed) }
    }
    /// When the playhead was last set (cache clock seconds).
    var lastRequest: Double {
        get { Double(bitPattern: atomicLastRequest.load(ordering: .relaxed)) }
        set { atomicLastRequest.store(newValue.bitPattern, ordering: .relaxed) }
    }
    /// The cache's purge count when the image was last asked for: an image not asked for since
    /// the last purge is not decoded again (``CacheState/isActive(_:now:)``).
    var requestGeneration: Int {
        get { atomicRequestGeneration.load(ordering: .relaxed) }
        set { atomicRequestGeneration.store(newValue, ordering: .relaxed) }
    }
    /// A tick of the last request that took the cache's lock: breaks ties of ``lastRequest``
    /// (see ``usedBefore(_:)``).
    var lastUse: UInt64

    private let atomicPlayhead = Atomic<Int>(0)
    private let atomicWindow = Atomic<Int>(1)
    private let atomicListedActive = Atomic<Bool>(false)
    private let atomicLastRequest = Atomic<UInt64>(0)
    private let atomicRequestGeneration = Atomic<Int>(0)
    private let atomicBusy = Atomic<Bool>(false)

    /// Completions waiting per frame index, the order frames were first asked for, and when the
    /// oldest of them began to wait (a tick: waiting requests are served first come, first served).
    var waiting: [Int: [Completion]] = [:]
    var waitOrder: [Int] = []
    var waitingSince: UInt64 = 0

    /// A worker holds the renderer.
    var busy: Bool {
        get { atomicBusy.load(ordering: .relaxed) }
        set { atomicBusy.store(newValue, ordering: .relaxed) }
    }
    /// Set while busy when a purge wants the checkpoints gone.
    var discardCheckpointsAfterJob = false
    /// Set while busy when a critical purge wants the decoder gone (unless the image is asked
    /// for again before the job ends).
    var dropRendererAfterJob = false
    /// A frame decoded ahead found no room and was thrown away: no more decoding ahead for
    /// this image until its playhead moves or the windows are worked out again.
    var prefetchStalled = false

    /// Start of each frame on the played timeline and the length of one play, in milliseconds;
    /// known once the image is loaded (until then every frame counts as 100 ms).
    private(set) var timestampsMs: [Int]?
    private(set) var durationMs = 0

    init(image: CacheableImage, now: Double, tick: UInt64) {
        id = image.id
        frameCount = image.frameCount
        decodedFrameBytes = image.canvasWidth * image.canvasHeight * 4
        load = image.load
        prepare = image.prepare
        frames = Array(repeating: nil, count: max(0, image.frameCount))
        lastUse = tick
        lastRequest = now
    }

    /// Whether this image was used less recently than `other`: asked for earlier, or (at the
    /// same time, as with a test clock) through the lock earlier.
    func usedBefore(_ other: ImageEntry) -> Bool {
        let (mine, theirs) = (lastRequest, other.lastRequest)
        return mine != theirs ? mine < theirs : lastUse < other.lastUse
    }

    var heldBytes: Int { frameBytes + rendererBytes }

    /// The average PNG size so far, or a guess (a quarter of the raw canvas) before any.
    var encodedFrameEstimate: Int {
        encodedSamples > 0 ? encodedTotal / encodedSamples : max(1, decodedFrameBytes / 4)
    }

    /// No frame has been encoded yet, so ``encodedFrameEstimate`` is a guess.
    var estimateIsGuess: Bool { encodedSamples == 0 }

    /// One play of the animation, in milliseconds.
    var loopMs: Int { timestampsMs != nil && durationMs > 0 ? durationMs : 100 * max(1, frameCount) }

    private func learnTiming(_ timeline: Timeline) {
        guard timeline.timestampsMs.count == frameCount else { return }
        timestampsMs = timeline.timestampsMs
        durationMs = timeline.durationMs
    }

    // MARK: Window

    /// True when frame `i` lies in the window that starts at the playhead (wrapping).
    func inWindow(_ i: Int) -> Bool {
        frameCount > 0 && (i - playhead + frameCount) % frameCount < window
    }

    /// The frame just before the playhead: when the decoder's canvas has been evicted, a
    /// request for the frame after the playhead resumes from it (one PNG decode) instead of
    /// replaying from a key frame, so eviction keeps it longer than other frames behind.
    func isResumeAnchor(_ i: Int) -> Bool {
        frameCount > 1 && i == (playhead - 1 + frameCount) % frameCount
    }

    /// The first frame of the window that is neither cached nor waited for, if any.
    var nextPrefetch: Int? {
        guard frameCount > 0 else { return nil }
        for step in 0..<min(window, frameCount) {
            let i = (playhead + step) % frameCount
            if frames[i] == nil && waiting[i] == nil { return i }
        }
        return nil
    }

    /// The frame a new run of decode-ahead would start with: ``nextPrefetch``, but, for a
    /// window that does not hold the whole animation, only once the frames ready from the
    /// playhead on have run down to half the window. Refilling in runs rather than a frame at
    /// a time lets a run reuse one canvas, where single frames would each restore it.
    var nextRunStart: Int? {
        guard let next = nextPrefetch else { return nil }
        if window >= frameCount { return next }
        let ready = (next - playhead + frameCount) % frameCount
        return ready <= window / 2 ? next : nil
    }

    /// Milliseconds of playback from the playhead to the start of frame `i` (wrapping).
    func playbackMs(toFrame i: Int) -> Int {
        guard let stamps = timestampsMs, durationMs > 0 else {
            return 100 * ((i - playhead + frameCount) % max(1, frameCount))
        }
        let delta = stamps[i] - stamps[playhead]
        return delta >= 0 ? delta : delta + durationMs
    }

    /// When frame `i` will be asked for if the client keeps playing in real time (cache clock
    /// seconds): what earliest-deadline-first decode-ahead orders its work by.
    func deadline(ofFrame i: Int) -> Double {
        lastRequest + Double(playbackMs(toFrame: i)) / 1000
    }

    // MARK: Frames

    /// Keeps frame `i` (and shows it to the hit tables); returns the bytes it costs.
    @discardableResult
    func store(_ frame: CachedFrame, at i: Int) -> Int {
        guard frames[i] == nil else { return 0 }
        frames[i] = frame
        frameBytes += frame.count
        cachedCount += 1
        encodedTotal += frame.bytes.slotBytes
        encodedSamples += 1
        hitTables?.set(frame, at: i, of: self)
        return frame.count
    }

    /// Lets frame `i` go (from the hit tables too); returns the bytes it cost.
    @discardableResult
    func drop(_ i: Int) -> Int {
        guard let frame = frames[i] else { return 0 }
        frames[i] = nil
        frameBytes -= frame.count
        cachedCount -= 1
        hitTables?.set(nil, at: i, of: self)
        return frame.count
    }

    /// The nearest cached frame before `index` (at most `reach` frames back) whose PNG can seed
    /// the renderer (its disposal is not "previous"), with that PNG (not copied: most jobs never
    /// resume, and a frame in the memory file would be copied out under the cache's lock).
    func resumePoint(before index: Int, reach: Int = 64) -> (frame: Int, png: FrameBytes)? {
        guard let image, index > 0 else { return nil }
        let descriptors = image.index.frames
        var j = index - 1
        while j >= 0 && index - j <= reach {
            if let frame = frames[j], descriptors[j].disposal != .previous { return (j, frame.bytes) }
            j -= 1
        }
        return nil
    }

    // MARK: Waiting requests

    func addWaiter(_ completion: @escaping Completion, for i: Int, tick: UInt64) {
        if waitOrder.isEmpty { waitingSince = tick }
        if waiting[i] != nil {
            waiting[i]!.append(completion)
        } else {
            waiting[i] = [completion]
            waitOrder.append(i)
        }
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
