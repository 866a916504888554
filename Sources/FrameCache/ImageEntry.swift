import AnimatedImage
import Synchronization

/// The cache's record of one rendition of one image (``FrameRendition``; the full-size PNG is
/// one too): its encoded frames, its playhead and window, when its next frames will be wanted,
/// and the requests waiting for it. The image and its decoder are its ``ImageSource``'s, shared
/// with the image's other renditions. Used under the cache's lock (a worker takes the source's
/// renderer out while it decodes, marked by `busy`) — except what the hit path reads and writes
/// without it (``FrameCache/cachedFrame(id:index:reader:)``): the playhead, the time of the last
/// request, the count of playhead moves, and the flags that say whether a hit must take the lock
/// after all (active, busy, window, purge generation). Those are atomics; holders of the lock
/// read and write them like any other field. The frames themselves reach the hit path through
/// the hit tables (``HitTables``), which ``store(_:at:)`` and ``drop(_:)`` keep current.
final class ImageEntry: @unchecked Sendable {
    typealias Completion = @Sendable (Result<EncodedFrame, FrameCacheError>) -> Void

    /// The cache key: the image's id, and the rendition's key unless it is the full-size PNG
    /// (``CacheableImage/key``).
    let id: String
    let frameCount: Int
    let source: ImageSource
    let rendition: FrameRendition
    /// The full-size PNG rendition: its frames are today's frames and can seed the renderer.
    let isExact: Bool
    /// Makes the attachment of each frame (``CacheableImage/prepare``).
    let prepare: CacheableImage.Preparer?
    /// The hit tables that mirror this entry's frames (nil for entries built by hand in tests).
    weak var hitTables: HitTables?
    /// The orders of its cache's state that it is in (``CacheIndex``; nil until the cache holds
    /// it, and once it let it go), its places there, and what it counts in
    /// ``CacheIndex/idlePosterBytes``. What the orders read changes under the lock here, and each
    /// change places the entry again.
    weak var index: CacheIndex?
    var slots = IndexSlots()
    var countedPosterBytes = 0
    /// What ``overheadBytes`` was when its cache took it in (``EntryTable``).
    var countedOverheadBytes = 0

    /// RGBA bytes of one canvas (the decoder's, the source's).
    var decodedFrameBytes: Int { source.decodedFrameBytes }
    /// RGBA bytes of one frame of this rendition (what the window policy sizes "small" by).
    var outputFrameBytes: Int { isExact ? decodedFrameBytes : rendition.outputWidth * rendition.outputHeight * 4 }
    /// The source's image, decoder and its accounting, and the decode thread's hold on them.
    var image: AnimatedImage? { source.image }
    var renderer: FrameRenderer? {
        get { source.renderer }
        set { source.renderer = newValue }
    }
    var rendererBytes: Int { source.rendererBytes }
    var busy: Bool {
        get { source.busy }
        set { source.busy = newValue }
    }

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
    /// Frames kept and decoded ahead from the playhead (wrapping); 0 for an inactive image and
    /// for a rendition made on demand.
    var window: Int {
        get { atomicWindow.load(ordering: .relaxed) }
        set {
            guard atomicWindow.exchange(newValue, ordering: .relaxed) != newValue else { return }
            index?.reindex(self)
        }
    }
    /// The window covers the whole animation because it fits (see ``WindowPolicy``).
    var isWhole = false
    /// A rendition that is active but not among its image's few decoded ahead, or one only sought
    /// in (``isSought``; see ``CachePolicy/windowPlan(for:now:cap:)``): its
    /// frames are made when asked for and go first when room is needed; its poster is kept only
    /// if it is the full-size one.
    var onDemand = false
    /// Makes the rendition one whose frames are made when asked for (``onDemand``): no window;
    /// it takes the next `ridingFrames` frames after its playhead from composites made anyway.
    func makeOnDemand(ridingFrames: Int) {
        onDemand = true
        window = 0
        isWhole = false
        self.ridingFrames = ridingFrames
    }

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
    /// the last purge is not decoded again (``CachePolicy/isActive(_:in:now:)``).
    var requestGeneration: Int {
        get { atomicRequestGeneration.load(ordering: .relaxed) }
        set { atomicRequestGeneration.store(newValue, ordering: .relaxed) }
    }
    /// How many times a player's request moved the playhead on (``PlayCursors/Move/playOn``: a
    /// client's third frame in order, or later): a rendition is played (and may be decoded
    /// ahead) once it has, not while one frame of it was asked for, nor while frames all over
    /// it are.
    var playheadMoves: Int { atomicMoves.load(ordering: .relaxed) }
    /// A tick of the last request that took the cache's lock: breaks ties of ``lastRequest``
    /// (see ``usedBefore(_:)``).
    var lastUse: UInt64 {
        didSet { index?.reindex(self) }
    }

    private let atomicPlayhead = Atomic<Int>(0)
    private let atomicWindow = Atomic<Int>(1)
    private let atomicListedActive = Atomic<Bool>(false)
    private let atomicLastRequest = Atomic<UInt64>(0)
    private let atomicRequestGeneration = Atomic<Int>(0)
    private let atomicMoves = Atomic<Int>(0)
    private let atomicSought = Atomic<Bool>(false)
    private let atomicMovedOn = Atomic<Bool>(false)
    /// Where its clients are (``PlayCursors``): taken on the hit path too, for a few compares.
    private let cursors: Mutex<PlayCursors>

    /// Completions waiting per frame index, the order frames were first asked for, and when the
    /// oldest of them began to wait (a tick: waiting requests are served first come, first served).
    var waiting: [Int: [Completion]] = [:]
    var waitOrder: [Int] = []
    var waitingSince: UInt64 = 0
    /// When the oldest of them began to wait (cache clock seconds).
    var waitingSinceSeconds = 0.0

    /// Being played: its playhead moved, as opposed to a rendition asked for a frame and not
    /// followed (a one-off). Players come first where they compete with one-offs: a client asking
    /// for one frame in size after size must slow itself, not them.
    var isPlayed: Bool { playheadMoves > 0 }

    /// Frames waited for only by requests that were seeks (``PlayCursors/Move/seek``): a client
    /// asking for a frame far from every player of a played rendition is served as a one-off.
    private(set) var soughtFrames: Set<Int> = []

    /// Requests of a player wait: a client moved on in the rendition (from its second frame in
    /// order: a player's requests come first before it counts as played, so that its start is
    /// not queued behind a client asking for one frame in size after size) and a frame is
    /// waited for by a request that was not a seek.
    var waitsAsPlayer: Bool {
        movedOn && !(nextWaitingFrame.map(soughtFrames.contains) ?? false)
    }

    /// A request has moved the playhead on (``PlayCursors/Move/movesOn``).
    var movedOn: Bool { atomicMovedOn.load(ordering: .relaxed) }

    /// The waited-for frame to make next: the first asked for by a player, else the first asked for.
    var nextWaitingFrame: Int? {
        soughtFrames.isEmpty ? waitOrder.first : (waitOrder.first { !soughtFrames.contains($0) } ?? waitOrder.first)
    }

    /// Asked for frames far from each other and never played on (``PlayCursors``): a client
    /// looking at frames here and there — or asking for size after size above the canvas, which
    /// all land on the full-size rendition. Made on demand rather than decoded ahead: a window
    /// at a playhead nobody moves would hold frames (the whole animation, for a small image)
    /// the players of its other renditions need the room for. A rendition asked for once is not
    /// sought: a new player's first request gets decode-ahead at once.
    var isSought: Bool { !isPlayed && atomicSought.load(ordering: .relaxed) }

    /// Whose waiting requests a decode thread takes first: a player's (``waitsAsPlayer``), then
    /// the one waiting longest.
    func waitsBefore(_ other: ImageEntry) -> Bool {
        let (mine, theirs) = (waitsAsPlayer, other.waitsAsPlayer)
        return mine != theirs ? mine : waitingSince < other.waitingSince
    }

    /// Which goes first when room or a rendition slot is needed: a one-off before a played
    /// rendition, then the least recently used.
    func givenUpBefore(_ other: ImageEntry) -> Bool {
        isPlayed != other.isPlayed ? !isPlayed : usedBefore(other)
    }

    /// A frame decoded ahead found no room and was thrown away: no more decoding ahead for
    /// this image until its playhead moves or the windows are worked out again.
    var prefetchStalled = false {
        didSet { if prefetchStalled != oldValue { index?.reindex(self) } }
    }

    /// Start of each frame on the played timeline and the length of one play, in milliseconds;
    /// known once the image is loaded (until then every frame counts as 100 ms).
    var timestampsMs: [Int]? { source.timestampsMs }
    var durationMs: Int { source.durationMs }

    /// A rendition of `source`'s image, its playhead at frame `start`: the first frame asked for,
    /// or (`asked` false) where frames an upload left in the cache end, nobody having asked yet.
    init(
        image: CacheableImage, source: ImageSource, now: Double, tick: UInt64, startingAt start: Int = 0,
        asked: Bool = true
    ) {
        id = image.key
        frameCount = image.frameCount
        self.source = source
        rendition = image.rendition
        isExact = image.rendition.isExact(width: image.canvasWidth, height: image.canvasHeight)
        prepare = image.prepare
        frames = Array(repeating: nil, count: max(0, image.frameCount))
        lastUse = tick
        cursors = Mutex(PlayCursors(at: asked ? start : nil))
        lastRequest = now
        playhead = start
    }

    /// An entry with a source of its own (tests build states by hand).
    convenience init(image: CacheableImage, now: Double, tick: UInt64) {
        let source = ImageSource(image)
        self.init(image: image, source: source, now: now, tick: tick)
        source.entries.append(self)
    }

    /// Notes a request for frame `index` and moves the playhead there when the request plays on
    /// from where one of the rendition's clients was (``PlayCursors``); returns whether it moved.
    /// A seek — a frame far from every client — leaves the playhead, so one client asking for
    /// frames all over does not drag decode-ahead and the eviction order along, nor count as
    /// playing; two viewers at different points each play on from their own place, the
    /// playhead following whichever asked last.
    func movePlayhead(to index: Int) -> Bool {
        notePlaying(index).movesPlayhead
    }

    /// ``movePlayhead(to:)``, saying what the request was (a move that lands on the playhead,
    /// as when a cursor replaced by seeks plays on again, is a ``PlayCursors/Move/stay``). Only
    /// a player's cursor moving on (``PlayCursors/Move/playOn``) counts in ``playheadMoves``.
    func notePlaying(_ index: Int) -> PlayCursors.Move {
        let move = cursors.withLock { $0.note(index, frameCount: frameCount) }
        if move == .seek { atomicSought.store(true, ordering: .relaxed) }
        guard move.movesPlayhead else { return move }
        guard playhead != index else { return move == .first ? .first : .stay }
        playhead = index
        guard move.movesOn else { return move }
        atomicMovedOn.store(true, ordering: .relaxed)
        if move == .playOn { atomicMoves.wrappingAdd(1, ordering: .relaxed) }
        return move
    }

    /// Whether this image was used less recently than `other`: asked for earlier, or (at the
    /// same time, as with a test clock) through the lock earlier.
    func usedBefore(_ other: ImageEntry) -> Bool {
        let (mine, theirs) = (lastRequest, other.lastRequest)
        return mine != theirs ? mine < theirs : lastUse < other.lastUse
    }

    var heldBytes: Int { frameBytes + rendererBytes }

    /// What holding this rendition costs besides its frames and decoder, counted in the budget
    /// while the cache holds it (``EntryTable/overheadBytes``): the entry and its image's record
    /// (``ImageSource``, its closures and what they capture), their places in the cache's maps
    /// and orders, and its rows in the hit tables (``HitTables/imageBytes(frameCount:tables:)``).
    /// Estimated from the heap: with 49,000 two-frame entries held (and their frames and the
    /// records counted apart), malloc's bytes in use exceeded what was counted by about 320 bytes
    /// an entry when the fixed part was 2,048 (docs/benchmarks/scale.md, "What an entry costs").
    var overheadBytes: Int { Self.overheadBytes(frameCount: frameCount, hitTables: hitTables?.count ?? 0) }

    /// ``overheadBytes`` of a rendition of `frameCount` frames in a cache of `hitTables` tables.
    static func overheadBytes(frameCount: Int, hitTables: Int) -> Int {
        fixedOverheadBytes + frameCount * 8 + HitTables.imageBytes(frameCount: frameCount, tables: hitTables)
    }

    /// The part of ``overheadBytes`` that does not grow with the frames: the entry, its image's
    /// source and record as its closures hold them, its places in the maps and orders.
    static let fixedOverheadBytes = 2400

    /// Whether its poster (frame 0) is kept when room is needed and through purges: the
    /// full-size PNG's always, another rendition's while it is active and being played (its
    /// playhead moved), decoded ahead or not — not that of a rendition asked for once.
    var pinsPoster: Bool { isExact || (isListedActive && playheadMoves > 0) }

    /// Whether frame `i` is wanted now: asked for, or in the window and not stalled — or, for a
    /// rendition played but made on demand, one of the next ``ridingFrames`` after its playhead:
    /// when another rendition's composite of that frame is made, encoding it costs no decode.
    func wants(_ i: Int) -> Bool {
        guard frames[i] == nil else { return false }
        if waiting[i] != nil || (window > 0 && !prefetchStalled && inWindow(i)) { return true }
        guard onDemand, isListedActive, playheadMoves > 0, frameCount > 0 else { return false }
        let ahead = (i - playhead + frameCount) % frameCount
        return ahead >= 1 && ahead <= ridingFrames
    }

    /// Frames after the playhead a played on-demand rendition takes from composites made anyway:
    /// the frames its lookahead covers (``WindowPolicy/lookahead(of:)``), set with the windows.
    /// Players of one image that started apart are that far apart in the animation; with only
    /// the next two frames, a player more than two frames behind the one decoded ahead found
    /// none of its frames made and had each composited again when it asked (measured:
    /// BENCHMARKS.md, "Renditions: real time").
    var ridingFrames = 0

    /// The average PNG size so far, or a guess (a quarter of the raw canvas) before any.
    var encodedFrameEstimate: Int {
        encodedSamples > 0 ? encodedTotal / encodedSamples : max(1, decodedFrameBytes / 4)
    }

    /// No frame has been encoded yet, so ``encodedFrameEstimate`` is a guess.
    var estimateIsGuess: Bool { encodedSamples == 0 }

    /// One play of the animation, in milliseconds.
    var loopMs: Int { timestampsMs != nil && durationMs > 0 ? durationMs : 100 * max(1, frameCount) }

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
        index?.reindex(self)
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
        index?.reindex(self)
        return frame.count
    }

    /// The nearest cached frame before `index` (at most `reach` frames back) whose PNG can seed
    /// the renderer (its disposal is not "previous"; only full-size PNG frames can), with that PNG (not copied: most jobs never
    /// resume, and a frame in the memory file would be copied out under the cache's lock). The
    /// disposals are `image`'s: the caller has it loaded (the source may not hold it yet).
    func resumePoint(before index: Int, in image: AnimatedImage, reach: Int = 64) -> (frame: Int, png: FrameBytes)? {
        guard isExact, index > 0 else { return nil }
        let descriptors = image.index.frames
        var j = index - 1
        while j >= 0 && index - j <= reach {
            if let frame = frames[j], descriptors[j].disposal != .previous { return (j, frame.bytes) }
            j -= 1
        }
        return nil
    }

    // MARK: Waiting requests

    /// Adds a request waiting for frame `i`; `sought` when the request was a seek
    /// (``soughtFrames``).
    func addWaiter(_ completion: @escaping Completion, for i: Int, tick: UInt64, now: Double, sought: Bool = false) {
        if waitOrder.isEmpty { (waitingSince, waitingSinceSeconds) = (tick, now) }
        if waiting[i] != nil {
            waiting[i]!.append(completion)
            if !sought { soughtFrames.remove(i) }
        } else {
            waiting[i] = [completion]
            waitOrder.append(i)
            if sought { soughtFrames.insert(i) }
        }
        index?.reindex(self)
    }

    func takeWaiters(for i: Int) -> [Completion] {
        waitOrder.removeAll { $0 == i }
        soughtFrames.remove(i)
        defer { index?.reindex(self) }
        return waiting.removeValue(forKey: i) ?? []
    }

    func takeAllWaiters() -> [Completion] {
        waitOrder.removeAll()
        soughtFrames.removeAll()
        defer {
            waiting.removeAll()
            index?.reindex(self)
        }
        return waiting.values.flatMap { $0 }
    }

    var waiterCount: Int { waiting.values.reduce(0) { $0 + $1.count } }
}
