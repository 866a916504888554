import AnimatedImage
import FoundationEssentials
import Glibc
import Metrics
import Synchronization
import SystemResources

/// The process-wide cache of composited frames, shared by every client of every image.
///
/// - One byte budget covers every encoded frame and every decoder canvas and checkpoint.
///   (Image files are the store's, mapped from disk; they are not frame data.)
/// - A request for frame k of an image makes k its playhead. The frames after it, up to the
///   image's window (``WindowPolicy``: a lookahead for every active image, whole animations
///   where they fit), are decoded on background threads, the frame a real-time player will
///   want soonest first; a client asking in playback order finds its next frames ready.
/// - Decoding is sequential per image (one thread at a time holds an image's decoder), waiting
///   requests come before decode-ahead, concurrent requests for one frame share one decode,
///   and a waiting request is answered as soon as its frame is ready.
/// - Every cached frame doubles as a checkpoint: a decoder whose canvas was evicted resumes
///   from the PNG of the nearest cached frame before the one it must make, instead of
///   replaying from a key frame.
/// - Eviction takes what nobody is about to need first — idle images, frames behind
///   playheads (the one needed again last first, as the animation loops), idle decoders — and
///   frames inside windows only for a waiting request; frame 0 (the poster) stays unless
///   pressure is critical.
/// - Memory pressure (``memoryPressure(_:source:)``) purges at once and regrows in stages
///   (``PressureController``).
///
/// All state is guarded by one lock; decoding and encoding happen outside it
/// (FrameCache+Workers). A hit does not take it: ``cachedFrame(id:index:reader:)`` finds the
/// frame in its thread's ``HitTables`` and moves the playhead with atomic stores, and only goes
/// to the lock when decode-ahead may have to be woken (the frames ready ahead ran low), the image
/// became active again, or it was not asked for since a purge.
public final class FrameCache: @unchecked Sendable {
    public typealias Completion = @Sendable (Result<EncodedFrame, FrameCacheError>) -> Void

    public let configuration: FrameCacheConfiguration
    let clock: any MonotonicClock
    let lock = ConditionLock()
    var state: CacheState
    var pressure: PressureController
    /// The last 50 purges, oldest first (`/stats`).
    var purges: [PurgeRecord] = []
    var shuttingDown = false
    var runningWorkers = 0
    var activeJobs = 0
    /// Large jobs (``CachePolicy/isLarge(_:in:)``) running now: at most `decodeThreads − 1`, so one
    /// thread is always there for the other images' frames (with one thread, one at a time).
    var largeJobs = 0
    let metrics: CacheMetrics
    /// Turns composited canvases into each rendition's bytes: the exact bytes every frame route
    /// serves (public for what stages frames made elsewhere).
    public let encoder: RenditionEncoder
    /// The event loops' views of the frames, for hits without the lock.
    let hitTables: HitTables
    /// Where frames' PNGs are kept (nil: on the heap; ``FrameCacheConfiguration/frameArena``).
    let arena: FrameArena?
    /// The threads a composite's encodes are shared out to (``FrameCacheConfiguration/encodeThreadsPerFrame`` − 1).
    let encodeHelpers: EncodeHelpers
    /// ``CacheState/purgeGeneration``, readable without the lock.
    private let purgeGeneration = Atomic<Int>(0)
    /// Hits of the hit tables already counted in the metrics (under the lock).
    private var reportedTableHits = 0

    /// - Parameter metricsFactory: where hits, misses, decode times, bytes, purges and queue
    ///   depth are reported (default: the process's bootstrapped swift-metrics backend).
    public init(
        configuration: FrameCacheConfiguration, clock: any MonotonicClock = SystemMonotonicClock(),
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.configuration = configuration
        self.metrics = CacheMetrics(factory: metricsFactory)
        self.clock = clock
        self.state = CacheState(budget: configuration.budgetBytes, policy: CachePolicy(configuration))
        self.pressure = PressureController(schedule: configuration.pressure)
        self.encoder = RenditionEncoder(
            png: PNGEncoder(compressionLevel: configuration.pngCompressionLevel), webp: configuration.webpEncoder)
        self.hitTables = HitTables(count: configuration.hitTables)
        // Twice the budget, virtually: room to find free slots without moving frames.
        self.arena = configuration.frameArena ? FrameArena(capacity: max(64 << 20, configuration.budgetBytes * 2)) : nil
        self.encodeHelpers = EncodeHelpers(
            count: configuration.encodeThreadsPerFrame - 1, niceOffset: Self.decodeThreadNiceOffset)
        startWorkers()
    }

    deinit {
        shutdown()
    }

    // MARK: Requests

    /// Frame `index` of `image` in `image.rendition`. Returns it at once when cached (and
    /// `completion` is not called); otherwise returns nil and calls `completion` once, from a
    /// decode thread, when the frame is ready or cannot be made. Either way the frames after it
    /// are scheduled.
    public func frame(_ image: CacheableImage, index: Int, completion: @escaping Completion) -> EncodedFrame? {
        guard index >= 0, index < image.frameCount else {
            completion(.failure(.frameOutOfRange(index: index, frameCount: image.frameCount)))
            return nil
        }
        let now = clock.seconds()
        lock.lock()
        if shuttingDown {
            lock.unlock()
            completion(.failure(.shuttingDown))
            return nil
        }
        let entry = entry(for: image, startingAt: index, now: now)
        let move = state.noteRequest(for: index, of: entry, now: now)
        let moved = move.movesPlayhead
        refreshWindowsIfDue(now: now)
        if let frame = entry.frames[index] {
            state.counters.hits += 1
            let wake = moved && !entry.busy && entry.nextRunStart != nil
            lock.unlock()
            metrics.hit()
            if wake { lock.signal() }
            return frame.encoded(index)
        }
        state.counters.misses += 1
        if state.waitingRequests >= configuration.maxWaitingRequests {
            state.counters.refusedQueueFull += 1
            lock.unlock()
            metrics.miss()
            completion(.failure(.queueFull(retryAfterSeconds: 1)))
            return nil
        }
        state.wait(completion, for: index, of: entry, now: now, sought: move == .seek)
        let depth = state.waitingRequests
        lock.unlock()
        metrics.miss()
        metrics.queueDepth(depth)
        lock.signal()
        return nil
    }

    /// Frame `index` of the image (rendition) cached under `id` (``CacheableImage/key``) when it is
    /// cached, found without the cache's lock through the hit table of `reader` (the caller's event loop: ``FrameCacheConfiguration/hitTables``);
    /// nil otherwise — then ask ``frame(_:index:completion:)``, which decodes it.
    ///
    /// A hit moves the image's playhead as ``frame(_:index:completion:)`` does. It takes the
    /// cache's lock only when that matters: decode-ahead may have to be woken (the playhead left
    /// the part of the window already made), or the image became active again or was not asked
    /// for since the last purge.
    public func cachedFrame(id: String, index: Int, reader: Int) -> EncodedFrame? {
        hit(id, index: index, reader: reader) { $0.encoded(index) }
    }

    /// How many threads answer hits, each through its own table (the `reader`s of
    /// ``withCachedAttachment(id:index:reader:_:)``, numbered from 0).
    public var readers: Int { hitTables.count }

    /// `read`'s answer about what the client attached to frame `index` of the image (rendition)
    /// cached under `id` (``CacheableImage/prepare``) when that frame is cached; nil otherwise.
    /// A hit as ``cachedFrame(id:index:reader:)`` makes it. `read` runs under `reader`'s
    /// hit-table lock, so it must be short (the HTTP service picks the prepared answer it
    /// sends), and is given the attachment as the frame holds it, nil or not: lent, not retained
    /// (handed out, a frame's one attachment had its reference count written by every event loop
    /// that hit it; bound to a name first, it was retained too). Not generic: called from
    /// another module, a generic was not specialized, and looking up its types' metadata cost
    /// more than the hit.
    public func withCachedAttachment(
        id: String, index: Int, reader: Int, _ read: ((any FrameAttachment)?) -> (any AnyObject & Sendable)?
    ) -> (any AnyObject & Sendable)? {
        hit(id, index: index, reader: reader) { read($0.attachment) } ?? nil
    }

    /// A hit through `reader`'s table: `read`'s answer about the frame, read where the table
    /// holds it, with the playhead moved and the cache nudged as ``cachedFrame(id:index:reader:)``
    /// says.
    private func hit<Answer: Sendable>(_ id: String, index: Int, reader: Int, _ read: (CachedFrame) -> Answer) -> Answer? {
        var nudged: ImageEntry?
        var moved = false
        var now = 0.0
        let answer = hitTables.withHit(id, index: index, reader: reader) { entry, frame, runningLow -> Answer in
            now = clock.seconds()
            let movedNow = entry.movePlayhead(to: index)
            entry.lastRequest = now
            if movedNow && runningLow && !entry.busy || !entry.isListedActive
                || entry.requestGeneration != purgeGeneration.load(ordering: .relaxed)
            {
                // Retained only now: the lock's part of the hit runs after the table's lock.
                (nudged, moved) = (entry, movedNow)
            }
            return read(frame)
        }
        if let nudged { nudge(nudged, moved: moved, now: now) }
        return answer
    }

    /// Frame `index` of the image (rendition) cached under `id` when it is cached, else nil —
    /// without counting a hit, moving the playhead or decoding anything: for work that takes
    /// the frames the cache happens to hold (previews and storyboards made from the frames).
    public func peekFrame(id: String, index: Int) -> EncodedFrame? {
        hitTables.peek(id, index: index)?.encoded(index)
    }

    /// The part of a hit that needs the lock: the image is asked for (since the last purge), is
    /// active, and decode-ahead is woken when its next run should start.
    private func nudge(_ entry: ImageEntry, moved: Bool, now: Double) {
        lock.lock()
        guard !shuttingDown, state.entries[entry.id] === entry else {
            lock.unlock()
            return
        }
        state.noteHit(on: entry, moved: moved)
        refreshWindowsIfDue(now: now)
        let wake = moved && !entry.busy && entry.nextRunStart != nil
        lock.unlock()
        if wake { lock.signal() }
    }

    /// Brings the hits answered through the hit tables into the metrics backend's hit counter
    /// (they are counted per event loop, not one by one): call it before the metrics are read,
    /// as `/metrics` does.
    public func publishMetrics() {
        let tableHits = hitTables.hits
        lock.lock()
        let delta = tableHits - reportedTableHits
        reportedTableHits = tableHits
        lock.unlock()
        if delta > 0 { metrics.hits(delta) }
    }

    /// Drops everything held for an image — every rendition of it, and its decoder (it was
    /// deleted). Waiting requests fail with `.removed`.
    public func remove(id: String) {
        lock.lock()
        let waiters = state.remove(id)
        let held = state.heldBytes
        lock.unlock()
        metrics.bytes(held)
        for completion in waiters { completion(.failure(.removed)) }
    }

    /// A memory-pressure signal: purge now, and cap windows for a while (see ``PressureController``).
    public func memoryPressure(_ level: PressureLevel, source: String) {
        guard level != .normal else { return }
        let now = clock.seconds()
        lock.lock()
        pressure.signal(level, at: now)
        let freed = state.purge(level)
        purgeGeneration.store(state.purgeGeneration, ordering: .relaxed)
        refreshWindowsIfDue(now: now)
        purges.append(
            PurgeRecord(
                at: Date(), level: level, source: source, freedBytes: freed,
                bytesAfter: state.heldBytes))
        if purges.count > 50 { purges.removeFirst(purges.count - 50) }
        let held = state.heldBytes
        state.freed.markReturned(now: now)  // a purge is returned at once, whatever the amount
        lock.unlock()
        FreedMemory.returnToKernel()
        metrics.purge(level)
        metrics.bytes(held)
    }

    /// Bytes held now, by the cache's own accounting.
    public var heldBytes: Int {
        lock.lock()
        defer { lock.unlock() }
        return state.heldBytes
    }

    /// Waits until no decode is running or pending (tests and benchmarks).
    public func waitUntilIdle(timeout: Double = 30) {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while activeJobs > 0 || state.waitingRequests > 0 || state.peekJob(now: clock.seconds()) != nil {
            if !lock.wait(seconds: min(deadline.timeIntervalSinceNow, 0.05)), Date() >= deadline { return }
            refreshWindowsIfDue(now: clock.seconds())
        }
    }

    /// Stops the decode threads; waiting requests fail with `.shuttingDown`.
    public func shutdown() {
        lock.lock()
        if shuttingDown {
            lock.unlock()
            return
        }
        shuttingDown = true
        encodeHelpers.stop()
        let waiters = state.index.waiting.flatMap { $0.takeAllWaiters() }
        state.waitingRequests = 0
        lock.broadcast()
        lock.unlock()
        for completion in waiters { completion(.failure(.shuttingDown)) }
    }

    // MARK: Internals (under the lock)

    /// The entry of `image`'s rendition, made (with its playhead at `index`: the first request
    /// does not count as a move) when the cache holds none; `asked` false for frames an upload
    /// leaves in the cache (no client's cursor there, ``PlayCursors/Move/first``).
    func entry(for image: CacheableImage, startingAt index: Int, asked: Bool = true, now: Double) -> ImageEntry {
        let key = image.key
        if let existing = state.entries[key] { return existing }
        let source: ImageSource
        if let known = state.sources[image.id] {
            source = known
        } else {
            source = ImageSource(image)
            state.sources[image.id] = source
        }
        replaceRenditionIfFull(source)
        let entry = ImageEntry(
            image: image, source: source, now: now, tick: state.nextTick(), startingAt: index, asked: asked)
        source.entries.append(entry)
        entry.hitTables = hitTables
        state.entries[key] = entry
        hitTables.insert(entry)
        return entry
    }

    /// Keeps an image's renditions within ``ImageSource/maxRenditions``: before another is added,
    /// one that is neither the full-size PNG nor decoded ahead and that nobody waits for goes,
    /// with its frames — a rendition never played (asked for one frame) before a played one,
    /// the least recently used first.
    private func replaceRenditionIfFull(_ source: ImageSource) {
        guard source.entries.count >= ImageSource.maxRenditions else { return }
        let candidates = source.entries.filter {
            !$0.isExact && ($0.onDemand || !$0.isListedActive) && $0.waitOrder.isEmpty
        }
        guard
            let victim = candidates.min(by: { a, b in
                a.givenUpBefore(b)
            })
        else { return }
        state.discard(victim)
        state.counters.renditionsReplaced += 1
    }

    /// Images whose active time passed go idle, and the windows are worked out again when due
    /// (``CacheState/refreshWindowsIfDue(now:cap:)``), capped as the pressure says.
    func refreshWindowsIfDue(now: Double) {
        state.refreshWindowsIfDue(now: now, cap: pressure.windowCap(at: now))
    }

    /// Canvas checkpoints one decoder may keep: a quarter of the budget shared by the active
    /// images, so fifty decoders cannot each claim a quarter of it.
    func checkpointAllowance() -> Int {
        max(0, configuration.budgetBytes / 4 / max(1, state.index.active.count))
    }
}
