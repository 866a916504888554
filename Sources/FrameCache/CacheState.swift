/// Everything the cache holds, and the decisions made under its lock: which work comes next,
/// what to evict, what a purge drops. No threads and no clocks here: callers pass the time.
struct CacheState {
    var entries: [String: ImageEntry] = [:]
    private(set) var heldBytes = 0
    /// The part of `heldBytes` that is decoders: file bytes, canvases and checkpoints.
    private(set) var decoderBytes = 0
    private var tick: UInt64 = 0
    var waitingRequests = 0
    var counters = CacheCounters()

    let budget: Int

    init(budget: Int) {
        self.budget = budget
    }

    mutating func nextTick() -> UInt64 {
        tick += 1
        return tick
    }

    mutating func account(_ delta: Int) {
        heldBytes += delta
    }

    /// Removes an entry entirely; returns its waiters.
    mutating func remove(_ id: String) -> [ImageEntry.Completion] {
        guard let entry = entries.removeValue(forKey: id) else { return [] }
        heldBytes -= entry.heldBytes
        decoderBytes -= entry.rendererBytes
        let waiters = entry.takeAllWaiters()
        waitingRequests -= waiters.count
        return waiters
    }

    // MARK: Choosing work

    /// A unit of background work: render and encode frame `index` of `entry`.
    struct Job {
        let entry: ImageEntry
        let index: Int
        /// Someone is waiting for it (as opposed to decoding ahead).
        let urgent: Bool
    }

    /// The next job: a frame someone waits for (oldest first), else a frame ahead of an active
    /// image's playhead (most recently used image first) when there is room for it. The job's
    /// image is marked busy.
    mutating func nextJob(now: Double, activeSeconds: Double) -> Job? {
        guard let job = peekJob(now: now, activeSeconds: activeSeconds) else { return nil }
        job.entry.busy = true
        return job
    }

    /// The job ``nextJob(now:activeSeconds:)`` would hand out, without taking it.
    func peekJob(now: Double, activeSeconds: Double) -> Job? {
        var urgent: ImageEntry? = nil
        var prefetch: ImageEntry? = nil
        for entry in entries.values where !entry.busy {
            if !entry.waitOrder.isEmpty {
                if urgent == nil || entry.lastUse < urgent!.lastUse { urgent = entry }
            } else if now - entry.lastRequest <= activeSeconds, !entry.decoderDoesNotFit, entry.nextPrefetch != nil {
                if prefetch == nil || entry.lastUse > prefetch!.lastUse { prefetch = entry }
            }
        }
        if let entry = urgent {
            return Job(entry: entry, index: entry.waitOrder[0], urgent: true)
        }
        if let entry = prefetch, let index = entry.nextPrefetch,
           roomForPrefetch(entry.encodedFrameEstimate, for: entry, now: now, activeSeconds: activeSeconds) {
            return Job(entry: entry, index: index, urgent: false)
        }
        return nil
    }

    /// Decoding ahead may only displace frames nobody is about to need.
    private func roomForPrefetch(_ bytes: Int, for entry: ImageEntry, now: Double, activeSeconds: Double) -> Bool {
        if heldBytes + bytes <= budget { return true }
        var reclaimable = 0
        for other in entries.values {
            let inactive = now - other.lastRequest > activeSeconds
            for i in 1..<max(1, other.frameCount) where other.frames[i] != nil {
                if inactive || !other.inWindow(i) { reclaimable += other.frames[i]!.count }
            }
            if inactive && !other.busy { reclaimable += other.rendererBytes }
            if heldBytes + bytes - reclaimable <= budget { return true }
        }
        return false
    }

    // MARK: Eviction

    /// How far eviction may go to make room.
    enum EvictionReach: Int, Comparable {
        /// Frames outside every window, and idle decoders of inactive images.
        case outsideWindows
        /// Also checkpoints, decoders and in-window frames of other images (someone waits).
        case inWindows
        /// Also posters (critical pressure).
        case posters

        static func < (a: EvictionReach, b: EvictionReach) -> Bool { a.rawValue < b.rawValue }
    }

    /// Evicts until `extra` more bytes fit in the budget. Never touches `keep` (the frame about
    /// to be stored). Returns true when they fit.
    @discardableResult
    mutating func makeRoom(for extra: Int, reach: EvictionReach, protecting requester: ImageEntry?,
                           keep: Int? = nil, now: Double, activeSeconds: Double) -> Bool {
        if heldBytes + extra <= budget { return true }
        let byAge = entries.values.sorted { $0.lastUse < $1.lastUse }
        // 1. Frames behind playheads (outside windows), and everything of inactive images.
        for entry in byAge {
            let inactive = now - entry.lastRequest > activeSeconds
            for i in 1..<max(1, entry.frameCount) where entry.frames[i] != nil {
                if entry === requester && i == keep { continue }
                if inactive || !entry.inWindow(i) { evict(entry, frame: i) }
                if heldBytes + extra <= budget { return true }
            }
            if inactive && !entry.busy && entry !== requester { dropRenderer(entry) }
            if heldBytes + extra <= budget { return true }
        }
        guard reach >= .inWindows else { return false }
        // 2. Decoder memory of other images, least recently used first.
        for entry in byAge where entry !== requester && !entry.busy {
            dropRenderer(entry)
            if heldBytes + extra <= budget { return true }
        }
        // 3. In-window frames: other images first (least recently used), farthest ahead first.
        for entry in byAge.filter({ $0 !== requester }) + (requester.map { [$0] } ?? []) {
            for step in stride(from: entry.window - 1, through: 1, by: -1) {
                let i = (entry.playhead + step) % max(1, entry.frameCount)
                if i == 0 || (entry === requester && i == keep) { continue }
                evict(entry, frame: i)
                if heldBytes + extra <= budget { return true }
            }
            let protected = entry === requester ? keep : nil
            if entry.playhead != 0, entry.playhead != protected {
                evict(entry, frame: entry.playhead)
                if heldBytes + extra <= budget { return true }
            }
        }
        guard reach >= .posters else { return false }
        for entry in byAge where !(entry === requester && keep == 0) {
            evict(entry, frame: 0)
            if heldBytes + extra <= budget { return true }
        }
        return heldBytes + extra <= budget
    }

    private mutating func evict(_ entry: ImageEntry, frame i: Int) {
        let freed = entry.drop(i)
        if freed > 0 {
            heldBytes -= freed
            counters.evictions += 1
        }
    }

    mutating func dropRenderer(_ entry: ImageEntry) {
        guard entry.renderer != nil || entry.image != nil || entry.rendererBytes > 0 else { return }
        entry.renderer = nil
        entry.image = nil  // the file's bytes go with the decoder; the next job reads them again
        heldBytes -= entry.rendererBytes
        decoderBytes -= entry.rendererBytes
        entry.rendererBytes = 0
    }

    /// Re-reads what a decoder holds after it worked — the file's bytes, the canvas and the
    /// checkpoints — and accounts the difference.
    mutating func updateRendererBytes(_ entry: ImageEntry) {
        let fileBytes = entry.image?.bytes.count ?? entry.renderer?.image.bytes.count ?? 0
        let now = fileBytes + (entry.renderer.map { $0.image.index.bytesPerFrame + $0.checkpointBytes } ?? 0)
        heldBytes += now - entry.rendererBytes
        decoderBytes += now - entry.rendererBytes
        entry.rendererBytes = now
    }

    // MARK: Purges

    /// A warning: every window drops to one frame and everything outside it goes (posters stay).
    /// Critical: every frame but the posters goes, with decoder memory.
    mutating func purge(_ level: PressureLevel) -> Int {
        let before = heldBytes
        for entry in entries.values {
            for i in 1..<max(1, entry.frameCount) where entry.frames[i] != nil {
                if level == .critical || i != entry.playhead { evict(entry, frame: i) }
            }
            if entry.busy {
                entry.discardCheckpointsAfterJob = true
            } else if level == .critical {
                dropRenderer(entry)
            } else if let renderer = entry.renderer {
                renderer.discardCheckpoints()
                updateRendererBytes(entry)
            }
        }
        return before - heldBytes
    }
}

/// Running totals reported by `/stats` and metrics.
struct CacheCounters: Sendable {
    var hits = 0
    var misses = 0
    /// Requests that joined a decode already under way or queued (coalesced).
    var coalesced = 0
    var decodes = 0
    var prefetches = 0
    var evictions = 0
    var uncacheable = 0
    var refusedQueueFull = 0
}
