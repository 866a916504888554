/// Everything the cache holds, and the decisions made under its lock: which images are active
/// and what their windows are, which work comes next (CacheState+Jobs), what to evict
/// (CacheState+Eviction), what a purge drops. No threads and no clocks here: callers pass the
/// time.
struct CacheState {
    /// Every rendition held, by cache key (``CacheableImage/key``).
    var entries: [String: ImageEntry] = [:]
    /// The decoding side of every image held, by image id; each holds its renditions' entries.
    var sources: [String: ImageSource] = [:]
    /// Images asked for within `activeSeconds` (or with requests waiting), as of the last
    /// ``refreshWindows(now:policy:cap:decodeThreads:)``; only these get windows and decode-ahead.
    private(set) var active: [ImageEntry] = []
    private(set) var heldBytes = 0
    /// Frames of images whose id is not known yet (uploads in progress), by owner
    /// (CacheState+Staging); their bytes are part of `heldBytes`.
    var staged: [String: StagedImage] = [:]
    private(set) var stagedBytes = 0
    /// The part of `heldBytes` that is decoders: canvases and checkpoints.
    private(set) var decoderBytes = 0
    private var tick: UInt64 = 0
    var waitingRequests = 0
    var counters = CacheCounters()
    /// Bytes let go of, to be handed back to the kernel now and then.
    var freed = FreedMemory()
    /// When windows were last worked out, and whether something changed since that needs them
    /// worked out again at once (an image became active, pressure, a removal).
    private(set) var windowsRefreshedAt = -Double.infinity
    /// Counts purges; an entry asked for since the last one carries the same number
    /// (``ImageEntry/requestGeneration``).
    private(set) var purgeGeneration = 0
    var windowsStale = true

    let budget: Int
    let activeSeconds: Double
    /// What the decode threads need while they work, set aside from the budget: see
    /// ``workingCanvasesPerThread``. Worked out with the windows.
    private(set) var workingReserve = 0

    /// Canvases' worth of memory one decode thread uses besides what the cache holds: the
    /// frame being decoded, the filtered rows and the compressed stream of the encode (which
    /// its workspace keeps for the next one), the palette indices, the PNG being copied out,
    /// and the allocator's slack around them. Measured in bench-playback (2 threads, canvases up
    /// to 640×360 = 0.9 MiB): at its peaks the heap stood 6.9 MiB above the cache's own count
    /// and the baseline, ≈ 3.7 canvases per thread; with 3 the peak RSS touched the goal's limit.
    static let workingCanvasesPerThread = 4

    /// The most the cache holds: the budget less the working reserve, but never less than a
    /// quarter of the budget (a budget too small for the threads' work still caches something).
    var holdLimit: Int { max(budget - workingReserve, budget / 4) }

    /// The largest canvas (decoded frame) the cache plans for: a quarter of the budget, the
    /// least ``holdLimit`` ever is. A larger canvas — a legal 7000×7000 frame is 196 MB — sizes
    /// neither the working reserve nor the decoders' canvases set aside from the windows, and its
    /// decoder is not kept after a job: the reserve could never cover its work (several times
    /// the whole budget; that is bounded by the decode-memory budget, `limits.maxDecodeBytes`,
    /// each job reserving before it allocates), and planning for it cut every other image's
    /// window to nothing and the cache to a quarter of its budget for as long as it stayed
    /// active (measured in the soak: frame p99 7–12 ms → 24–150 ms for the 20 s after each
    /// 49 MP first frame, until the next purge made it inactive).
    var largestPlannedCanvas: Int { budget / 4 }

    init(budget: Int, activeSeconds: Double) {
        self.budget = budget
        self.activeSeconds = activeSeconds
    }

    mutating func nextTick() -> UInt64 {
        tick += 1
        return tick
    }

    /// The image was asked for since the last purge.
    func askedForSincePurge(_ entry: ImageEntry) -> Bool {
        entry.requestGeneration == purgeGeneration
    }

    /// An image is active — it has a window and is decoded ahead — when it was asked for within
    /// `activeSeconds` and since the last purge, or has requests waiting. After a purge only
    /// images asked for again are decoded again: what nobody watches stays purged.
    func isActive(_ entry: ImageEntry, now: Double) -> Bool {
        (askedForSincePurge(entry) && now - entry.lastRequest <= activeSeconds) || !entry.waitOrder.isEmpty
    }

    // MARK: Accounting

    /// Stores frame `i` in `entry` and counts it.
    mutating func store(_ frame: CachedFrame, in entry: ImageEntry, at i: Int) {
        // The first real frame size replaces the guess windows were sized by.
        if entry.estimateIsGuess { windowsStale = true }
        heldBytes += entry.store(frame, at: i)
    }

    mutating func evict(_ entry: ImageEntry, frame i: Int) {
        let heap = entry.frames[i].map(FreedMemory.heapBytes(of:)) ?? 0
        let bytes = entry.drop(i)
        if bytes > 0 {
            heldBytes -= bytes
            freed.note(heapBytes: heap)
            counters.evictions += 1
        }
    }

    /// Counts staged frames' bytes coming (positive) or going (negative).
    mutating func account(stagedBytes delta: Int) {
        heldBytes += delta
        stagedBytes += delta
    }

    /// Drops an entry's decoder (canvas and checkpoints). An inactive entry also lets go of its
    /// image, so the store may release the file's mapping.
    mutating func dropRenderer(_ entry: ImageEntry, releasingImage: Bool = false) {
        precondition(!entry.busy, "a decoder in use cannot be dropped")
        entry.renderer = nil
        if releasingImage { entry.image = nil }
        heldBytes -= entry.rendererBytes
        decoderBytes -= entry.rendererBytes
        freed.note(heapBytes: FreedMemory.heapBytes(ofCanvases: entry.rendererBytes, canvasBytes: entry.decodedFrameBytes))
        entry.rendererBytes = 0
    }

    /// Re-reads what a decoder holds after it worked — its canvas and its checkpoints — and
    /// accounts the difference.
    mutating func updateRendererBytes(_ entry: ImageEntry) {
        let now = entry.renderer.map { $0.image.index.bytesPerFrame + $0.checkpointBytes } ?? 0
        freed.note(heapBytes: FreedMemory.heapBytes(ofCanvases: entry.rendererBytes - now, canvasBytes: entry.decodedFrameBytes))
        heldBytes += now - entry.rendererBytes
        decoderBytes += now - entry.rendererBytes
        entry.rendererBytes = now
    }

    /// Removes an image entirely — every rendition of it, and its decoder; returns the waiters.
    mutating func remove(_ id: String) -> [ImageEntry.Completion] {
        let source = sources.removeValue(forKey: id) ?? entries[id]?.source
        guard let source else { return [] }
        var waiters: [ImageEntry.Completion] = []
        for entry in source.entries { waiters += discard(entry) }
        heldBytes -= source.rendererBytes
        decoderBytes -= source.rendererBytes
        freed.note(heapBytes: FreedMemory.heapBytes(ofCanvases: source.rendererBytes, canvasBytes: source.decodedFrameBytes))
        windowsStale = true
        return waiters
    }

    /// Takes one rendition out of the cache: its frames (accounted), its place in the maps and
    /// the hit tables; returns its waiters. The source's decoder stays.
    @discardableResult
    mutating func discard(_ entry: ImageEntry) -> [ImageEntry.Completion] {
        if entries[entry.id] === entry { entries[entry.id] = nil }
        entry.hitTables?.remove(entry)
        entry.source.entries.removeAll { $0 === entry }
        heldBytes -= entry.frameBytes
        freed.note(heapBytes: entry.frames.reduce(0) { $0 + ($1.map(FreedMemory.heapBytes(of:)) ?? 0) })
        active.removeAll { $0 === entry }
        let waiters = entry.takeAllWaiters()
        waitingRequests -= waiters.count
        return waiters
    }

    /// Forgets a rendition that holds nothing and that nobody waits for, and its image when
    /// nothing of it is left (no other rendition, no decoder).
    mutating func forget(_ entry: ImageEntry) {
        discard(entry)
        let source = entry.source
        if source.entries.isEmpty && !source.busy && source.besideJob == nil && source.renderer == nil
            && source.rendererBytes == 0,
            sources[source.id] === source
        {
            sources[source.id] = nil
        }
    }

    /// Whether a rendition holds nothing worth keeping its record for: no frames, nobody waiting,
    /// and its image either kept by another rendition or holding no decoder.
    func isForgettable(_ entry: ImageEntry) -> Bool {
        entry.frameBytes == 0 && entry.cachedCount == 0 && entry.waitOrder.isEmpty
            && (entry.source.entries.count > 1 || (!entry.busy && entry.renderer == nil && entry.rendererBytes == 0))
    }

    // MARK: Windows

    /// Works out which images are active, the working reserve (for the largest active canvas that
    /// is not large, ``isLarge(_:)``), and every active image's window (``WindowPolicy``) within
    /// the hold limit less the canvases the decoders in use keep (one of the largest per thread)
    /// and less the posters of inactive images. Inactive images get no window. Of an image's
    /// active renditions other than the full-size PNG, only the `decodeAheadRenditions` most
    /// recently used among those being played get windows; the rest are made on demand
    /// (``ImageEntry/onDemand``). Entries that hold nothing and are inactive are forgotten (an
    /// active one may be the entry a request is about to wait on).
    mutating func refreshWindows(now: Double, policy: WindowPolicy, cap: Int?, decodeThreads: Int, decodeAheadRenditions: Int = 4)
    {
        var nowActive: [ImageEntry] = []
        var renditions: [ObjectIdentifier: [ImageEntry]] = [:]
        var idlePosters = 0
        var forget: [ImageEntry] = []
        for entry in entries.values {
            entry.isListedActive = isActive(entry, now: now)
            entry.onDemand = false
            if entry.isListedActive {
                nowActive.append(entry)
                if entry.isSought {
                    entry.makeOnDemand(ridingFrames: 0)
                } else if !entry.isExact {
                    renditions[ObjectIdentifier(entry.source), default: []].append(entry)
                }
            } else {
                entry.window = 0
                entry.isWhole = false
                if entry.isExact { idlePosters += entry.frames.first??.count ?? 0 }
                if isForgettable(entry) { forget.append(entry) }
            }
        }
        for group in renditions.values {
            let played = group.filter { $0.playheadMoves > 0 }.sorted { $1.usedBefore($0) }
            let decodedAhead = Set(played.prefix(max(0, decodeAheadRenditions)).map(ObjectIdentifier.init))
            for entry in group where !decodedAhead.contains(ObjectIdentifier(entry)) {
                entry.makeOnDemand(
                    ridingFrames: entry.playheadMoves > 0 ? min(policy.lookahead(of: demand(of: entry)), cap ?? .max) : 0)
            }
        }
        for entry in forget { self.forget(entry) }
        let windowed = nowActive.filter { !$0.onDemand && entries[$0.id] === $0 }
        let demands = windowed.map(demand(of:))
        let largestCanvas = nowActive.filter { !isLarge($0) }.map(\.decodedFrameBytes).max() ?? 0
        workingReserve = decodeThreads * Self.workingCanvasesPerThread * largestCanvas
        let canvases = decodeThreads * largestCanvas
        let windows = policy.windows(for: demands, budget: holdLimit - canvases - idlePosters, cap: cap)
        for (entry, window) in zip(windowed, windows) {
            entry.prefetchStalled = false
            entry.window = window
            entry.isWhole = policy.isWhole(window, frameCount: entry.frameCount)
        }
        active = nowActive.filter { entries[$0.id] === $0 }
        windowsRefreshedAt = now
        windowsStale = false
    }

    /// What the window policy needs to know of `entry`.
    private func demand(of entry: ImageEntry) -> WindowPolicy.Demand {
        WindowPolicy.Demand(
            frameCount: entry.frameCount, decodedFrameBytes: entry.outputFrameBytes,
            encodedFrameBytes: entry.encodedFrameEstimate, loopMs: entry.loopMs, wasWhole: entry.isWhole)
    }

    // MARK: Purges

    /// A warning: every window drops to one frame and everything outside it goes (posters stay),
    /// with checkpoints and every staged frame. Critical: every frame but the posters goes, with decoders.
    /// Either way, images not asked for since are no longer active (``isActive(_:now:)``).
    mutating func purge(_ level: PressureLevel) -> Int {
        let before = heldBytes
        purgeGeneration += 1
        purgeStaged()
        for entry in entries.values {
            // Posters stay, but those of renditions made on demand or not in use.
            if !entry.pinsPoster, entry.frameCount > 0 { evict(entry, frame: 0) }
            for i in 1..<max(1, entry.frameCount) where entry.frames[i] != nil {
                if level == .critical || i != entry.playhead { evict(entry, frame: i) }
            }
            if entry.busy {
                entry.discardCheckpointsAfterJob = true
                if level == .critical { entry.dropRendererAfterJob = true }
            } else if level == .critical {
                dropRenderer(entry)
            } else if let renderer = entry.renderer {
                renderer.discardCheckpoints()
                updateRendererBytes(entry)
            }
        }
        windowsStale = true
        return before - heldBytes
    }
}

/// Running totals reported by `/stats` and metrics.
struct CacheCounters: Sendable {
    var hits = 0
    var misses = 0
    /// Requests that joined a decode already under way or queued (coalesced).
    var coalesced = 0
    /// Frames made (rendered and encoded), for requests or ahead of them.
    var decodes = 0
    var prefetches = 0
    /// Frame decodes the renderers did, counting the frames replayed to reach a target.
    var framesDecoded = 0
    /// Renders that continued from a cached frame's PNG instead of replaying.
    var resumes = 0
    var evictions = 0
    var uncacheable = 0
    var refusedQueueFull = 0
    /// Frames encoded for another rendition from a canvas composited for one (no decode of their own).
    var sharedRenders = 0
    /// One-off requests made beside their image's busy decoder (``CacheState/takesBeside(_:)``).
    var decodesBeside = 0
    /// Renditions replaced to keep an image's count within ``ImageSource/maxRenditions``.
    var renditionsReplaced = 0
    /// Staged frames that became frames of the stored image (no decode of their own).
    var adopted = 0
}
