import AnimatedImage
import Foundation
import Metrics

/// The process-wide cache of composited frames, shared by every client of every image.
///
/// - One byte budget covers every encoded frame and every decoder canvas and checkpoint.
/// - A request for frame k of an image makes k its playhead and schedules the frames after it,
///   up to the image's window (``WindowPolicy``), on background decode threads; a client
///   asking in playback order finds its next frames ready.
/// - Decoding is sequential per image (one thread at a time holds an image's decoder), waiting
///   requests come before decode-ahead, concurrent requests for one frame share one decode,
///   and a waiting request is answered as soon as its frame is ready.
/// - Eviction takes frames behind playheads first, then least recently used images; frame 0
///   (the poster) stays unless pressure is critical.
/// - Memory pressure (``memoryPressure(_:source:)``) purges at once and regrows in stages
///   (``PressureController``).
///
/// All state is guarded by one lock; PNG decoding and encoding happen outside it.
public final class FrameCache: @unchecked Sendable {
    public typealias Completion = @Sendable (Result<EncodedFrame, FrameCacheError>) -> Void

    public let configuration: FrameCacheConfiguration
    private let clock: any CacheClock
    private let lock = NSCondition()
    private var state: CacheState
    private var pressure: PressureController
    private var purges: [PurgeRecord] = []
    private var shuttingDown = false
    private var runningWorkers = 0
    private var activeJobs = 0
    private let metrics: CacheMetrics
    private let encoder: PNGEncoder

    /// - Parameter metricsFactory: where hits, misses, decode times, bytes, purges and queue
    ///   depth are reported (default: the process's bootstrapped swift-metrics backend).
    public init(configuration: FrameCacheConfiguration, clock: any CacheClock = SystemCacheClock(),
                metricsFactory: any MetricsFactory = MetricsSystem.factory) {
        self.configuration = configuration
        self.metrics = CacheMetrics(factory: metricsFactory)
        self.clock = clock
        self.state = CacheState(budget: configuration.budgetBytes)
        self.pressure = PressureController(schedule: configuration.pressure)
        self.encoder = PNGEncoder(compressionLevel: configuration.pngCompressionLevel)
        lock.lock()
        runningWorkers = configuration.decodeThreads
        lock.unlock()
        for n in 0..<configuration.decodeThreads {
            let thread = Thread { [self] in self.workerLoop() }
            thread.name = "flipbook-decode-\(n)"
            thread.start()
        }
    }

    deinit {
        shutdown()
    }

    // MARK: Requests

    /// Frame `index` of `image`. Returns it at once when cached (and `completion` is not called);
    /// otherwise returns nil and calls `completion` once, from a decode thread, when the frame
    /// is ready or cannot be made. Either way the frames after it are scheduled.
    public func frame(_ image: CacheableImage, index: Int, completion: @escaping Completion) -> EncodedFrame? {
        guard index >= 0, index < image.frameCount else {
            completion(.failure(.frameOutOfRange(index: index, frameCount: image.frameCount)))
            return nil
        }
        let now = clock.now()
        lock.lock()
        if shuttingDown {
            lock.unlock()
            completion(.failure(.shuttingDown))
            return nil
        }
        let entry = entry(for: image, now: now)
        entry.playhead = index
        entry.lastRequest = now
        entry.lastUse = state.nextTick()
        updateWindow(entry, now: now)
        if let png = entry.frames[index] {
            state.counters.hits += 1
            let wake = entry.nextPrefetch != nil && !entry.busy
            lock.unlock()
            metrics.hit()
            if wake { lock.signal() }
            return EncodedFrame(index: index, png: png)
        }
        state.counters.misses += 1
        if state.waitingRequests >= configuration.maxWaitingRequests {
            state.counters.refusedQueueFull += 1
            lock.unlock()
            metrics.miss()
            completion(.failure(.queueFull(retryAfterSeconds: 1)))
            return nil
        }
        if entry.waiting[index] != nil {
            state.counters.coalesced += 1
            entry.waiting[index]!.append(completion)
        } else {
            entry.waiting[index] = [completion]
            entry.waitOrder.append(index)
        }
        state.waitingRequests += 1
        let depth = state.waitingRequests
        lock.unlock()
        metrics.miss()
        metrics.queueDepth(depth)
        lock.signal()
        return nil
    }

    /// Drops everything held for an image (it was deleted). Waiting requests fail with `.removed`.
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
        let now = clock.now()
        lock.lock()
        pressure.signal(level, at: now)
        let freed = state.purge(level)
        for entry in state.entries.values { updateWindow(entry, now: now) }
        purges.append(PurgeRecord(at: Date(), level: level, source: source, freedBytes: freed,
                                  bytesAfter: state.heldBytes))
        if purges.count > 50 { purges.removeFirst(purges.count - 50) }
        let held = state.heldBytes
        lock.unlock()
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
        while activeJobs > 0 || state.waitingRequests > 0 || hasPrefetchWork() {
            if !lock.wait(until: min(deadline, Date().addingTimeInterval(0.05))), Date() >= deadline { return }
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
        let waiters = state.entries.values.flatMap { $0.takeAllWaiters() }
        state.waitingRequests = 0
        lock.broadcast()
        lock.unlock()
        for completion in waiters { completion(.failure(.shuttingDown)) }
    }

    // MARK: Stats

    public func stats() -> CacheStats {
        let now = clock.now()
        lock.lock()
        defer { lock.unlock() }
        let images = state.entries.values.sorted { $0.lastUse > $1.lastUse }.map { entry in
            CacheStats.Image(id: entry.id, frameCount: entry.frameCount, cachedFrames: entry.cachedCount,
                             window: entry.window, playhead: entry.playhead, frameBytes: entry.frameBytes,
                             decoderBytes: entry.rendererBytes, loaded: entry.image != nil,
                             waiting: entry.waiterCount,
                             idleSeconds: max(0, now - entry.lastRequest))
        }
        let c = state.counters
        return CacheStats(
            budgetBytes: state.budget, usedBytes: state.heldBytes,
            frameBytes: images.reduce(0) { $0 + $1.frameBytes },
            decoderBytes: images.reduce(0) { $0 + $1.decoderBytes },
            entries: images.count, cachedFrames: images.reduce(0) { $0 + $1.cachedFrames },
            hits: c.hits, misses: c.misses, waits: c.misses - c.refusedQueueFull, coalesced: c.coalesced,
            decodes: c.decodes, prefetches: c.prefetches, evictions: c.evictions,
            refusedQueueFull: c.refusedQueueFull, queueDepth: state.waitingRequests,
            decodeThreads: configuration.decodeThreads,
            pressure: CacheStats.Pressure(level: pressure.level(at: now), windowCap: pressure.windowCap(at: now),
                                          onDemand: pressure.isOnDemand(at: now)),
            purges: purges, images: images)
    }

    /// The indices of an image's cached frames, in order.
    func cachedFrameIndices(of id: String) -> [Int] {
        lock.lock()
        defer { lock.unlock() }
        guard let entry = state.entries[id] else { return [] }
        return entry.frames.indices.filter { entry.frames[$0] != nil }
    }

    // MARK: Internals (under the lock)

    private func entry(for image: CacheableImage, now: Double) -> ImageEntry {
        if let existing = state.entries[image.id] { return existing }
        let entry = ImageEntry(image: image, now: now, tick: state.nextTick())
        state.entries[image.id] = entry
        return entry
    }

    /// Images requested within `activeImageSeconds`, recounted at most twice a second so the
    /// request path stays O(1).
    private var activeImages = (count: 1, countedAt: -Double.infinity)

    private func activeImageCount(now: Double) -> Int {
        if now - activeImages.countedAt > 0.5 {
            let count = state.entries.values.filter { now - $0.lastRequest <= configuration.activeImageSeconds }.count
            activeImages = (max(1, count), now)
        }
        return activeImages.count
    }

    /// Canvas checkpoints one decoder may keep: a quarter of the budget shared by the active
    /// images, so fifty decoders cannot each claim a quarter of it. Called under the lock.
    private func checkpointAllowance() -> Int {
        max(0, configuration.budgetBytes / 4 / max(1, activeImageCount(now: clock.now())))
    }

    private func updateWindow(_ entry: ImageEntry, now: Double) {
        let active = activeImageCount(now: now)
        // Frames share what the decoders leave (but always at least a quarter of the budget):
        // a window sized from the whole budget would be evicted by decoder memory before use.
        let frameBudget = max(state.budget / 4, state.budget - state.decoderBytes)
        entry.window = configuration.window.window(
            frameCount: entry.frameCount, decodedFrameBytes: entry.decodedFrameBytes,
            encodedFrameBytes: entry.encodedFrameEstimate, budget: frameBudget,
            activeImages: max(1, active), cap: pressure.windowCap(at: now))
    }

    /// What keeps the cache busy, for tests: empty when idle.
    func debugDescriptionOfWork() -> String {
        lock.lock()
        defer { lock.unlock() }
        var parts: [String] = []
        if activeJobs > 0 { parts.append("activeJobs \(activeJobs)") }
        if state.waitingRequests > 0 { parts.append("waitingRequests \(state.waitingRequests)") }
        if let job = state.peekJob(now: clock.now(), activeSeconds: configuration.activeImageSeconds) {
            parts.append("job \(job.entry.id)#\(job.index) urgent \(job.urgent)")
        }
        return parts.joined(separator: ", ")
    }

    private func hasPrefetchWork() -> Bool {
        state.peekJob(now: clock.now(), activeSeconds: configuration.activeImageSeconds) != nil
    }

    // MARK: Decode threads

    private func workerLoop() {
        while let (job, allowance) = takeJob() {
            run(job, checkpointAllowance: allowance)
        }
        lock.lock()
        runningWorkers -= 1
        lock.broadcast()
        lock.unlock()
    }

    /// Blocks until there is work; nil when shutting down.
    private func takeJob() -> (CacheState.Job, checkpointAllowance: Int)? {
        lock.lock()
        defer { lock.unlock() }
        while true {
            if shuttingDown { return nil }
            let now = clock.now()
            for entry in state.entries.values where !entry.busy { updateWindow(entry, now: now) }
            if let job = state.nextJob(now: now, activeSeconds: configuration.activeImageSeconds) {
                activeJobs += 1
                return (job, checkpointAllowance())
            }
            // Re-check now and then: windows regrow with time after memory pressure.
            _ = lock.wait(until: Date().addingTimeInterval(0.5))
        }
    }

    private func run(_ job: CacheState.Job, checkpointAllowance: Int) {
        let entry = job.entry
        let started = DispatchTime.now()
        var outcome: Result<[UInt8], FrameCacheError>
        // The entry is busy: this thread alone touches its image and renderer until it is released.
        var loaded: AnimatedImage? = nil
        do {
            let image = try loadImage(entry)
            loaded = image
            if entry.renderer == nil {
                entry.renderer = FrameRenderer(image: image, checkpointInterval: configuration.checkpointInterval,
                                               checkpointBudget: checkpointAllowance)
            }
            guard job.index < image.frameCount else {
                throw FrameCacheError.frameOutOfRange(index: job.index, frameCount: image.frameCount)
            }
            let canvas = try entry.renderer!.render(job.index)
            outcome = .success(try encoder.encode(canvas))
        } catch let error as FrameCacheError {
            outcome = .failure(error)
        } catch let error as AnimatedImageError {
            outcome = .failure(.decodeFailed(error.description))
        } catch {
            outcome = .failure(.decodeFailed("\(error)"))
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        metrics.decoded(seconds: elapsed)

        let now = clock.now()
        lock.lock()
        entry.busy = false
        if entry.image == nil { entry.image = loaded }
        activeJobs -= 1
        state.counters.decodes += 1
        if !job.urgent { state.counters.prefetches += 1 }
        var waiters: [ImageEntry.Completion] = []
        let live = state.entries[entry.id] === entry
        if live {
            waiters = entry.takeWaiters(for: job.index)
            state.waitingRequests -= waiters.count
            if entry.discardCheckpointsAfterJob {
                entry.renderer?.discardCheckpoints()
                entry.discardCheckpointsAfterJob = false
            }
            state.updateRendererBytes(entry)
            if case let .success(png) = outcome {
                let reach: CacheState.EvictionReach = pressure.level(at: now) == .critical ? .posters
                    : (waiters.isEmpty ? .outsideWindows : .inWindows)
                if state.makeRoom(for: png.count, reach: reach, protecting: entry, keep: job.index,
                                  now: now, activeSeconds: configuration.activeImageSeconds) {
                    state.account(entry.store(png, at: job.index))
                } else {
                    state.counters.uncacheable += 1
                }
            } else if case .failure = outcome {
                // A frame that cannot be made fails every request for this image's later frames too.
                for i in entry.waitOrder where i > job.index {
                    let more = entry.takeWaiters(for: i)
                    state.waitingRequests -= more.count
                    waiters += more
                }
            }
            keepDecoderWithinBudget(entry, now: now)
        } else {
            entry.renderer = nil
        }
        let held = state.heldBytes
        let depth = state.waitingRequests
        lock.broadcast()
        lock.unlock()
        metrics.bytes(held)
        metrics.queueDepth(depth)
        let result = outcome.map { EncodedFrame(index: job.index, png: $0) }
        for completion in waiters { completion(result) }
    }

    /// After a job the decoder's canvas and checkpoints count against the budget; when they do
    /// not fit, checkpoints go first, then the decoder itself.
    private func keepDecoderWithinBudget(_ entry: ImageEntry, now: Double) {
        guard state.heldBytes > state.budget else {
            entry.decoderDoesNotFit = false
            return
        }
        state.makeRoom(for: 0, reach: .outsideWindows, protecting: entry, now: now,
                       activeSeconds: configuration.activeImageSeconds)
        if state.heldBytes > state.budget, let renderer = entry.renderer, renderer.checkpointBytes > 0 {
            renderer.discardCheckpoints()
            state.updateRendererBytes(entry)
        }
        if state.heldBytes > state.budget {
            state.dropRenderer(entry)
            entry.decoderDoesNotFit = true
        } else {
            entry.decoderDoesNotFit = false
        }
        if state.heldBytes > state.budget {
            // The budget is never exceeded: as a last resort even posters go, oldest first.
            state.makeRoom(for: 0, reach: .posters, protecting: nil, now: now,
                           activeSeconds: configuration.activeImageSeconds)
        }
    }

    private func loadImage(_ entry: ImageEntry) throws -> AnimatedImage {
        if let image = entry.image { return image }
        do {
            return try entry.load()
        } catch let error as AnimatedImageError {
            throw FrameCacheError.loadFailed(error.description)
        } catch {
            throw FrameCacheError.loadFailed("\(error)")
        }
    }
}
