/// Everything the cache holds and its accounting, under the cache's lock: the entries and their
/// images, the bytes they hold, the counters. What to decode next, what to evict and how big the
/// windows are is its ``policy``'s to decide (``CachePolicy``, a pure function of this state and
/// the time); the `mutating` functions here carry those decisions out. No threads and no clocks
/// here: callers pass the time.
struct CacheState {
    /// Every rendition held, by cache key (``CacheableImage/key``), and the orders the policy
    /// reads (``index``).
    var entries: EntryTable
    /// The decoding side of every image held, by image id; each holds its renditions' entries.
    var sources: [String: ImageSource] = [:]
    /// Bytes held: frames (staged ones too), decoders with their images, and the entries'
    /// own cost (``EntryTable/overheadBytes``) — what the budget bounds.
    var heldBytes: Int { storedBytes + entries.overheadBytes }
    /// The part of `heldBytes` that is frames and decoders.
    private(set) var storedBytes = 0
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
    /// When windows were last worked out for every active image, and whether something changed
    /// since that needs them worked out again at once (a purge).
    var windowsRefreshedAt = -Double.infinity
    var windowsStale = true
    /// Images that became active or idle (or were first played) since the windows were last
    /// worked out: they are worked out again once enough did (``CachePolicy/windowsDue(changes:active:since:)``).
    var windowChanges = 0
    /// The pressure cap the windows were last worked out with (an image that becomes active
    /// meanwhile is held to it too).
    var windowCap: Int? = nil
    /// Counts purges; an entry asked for since the last one carries the same number
    /// (``ImageEntry/requestGeneration``).
    private(set) var purgeGeneration = 0

    let budget: Int
    /// What a mapped file held by a decoder counts (``ImageSource/mappingBytes(budget:)``).
    var mappingBytes: Int { ImageSource.mappingBytes(budget: budget) }
    /// Decides what the cache does with this state (``CachePolicy``).
    var policy: CachePolicy
    /// What the decode threads need while they work, set aside from the budget
    /// (``CachePolicy/Tuning/workingCanvasesPerThread``). Worked out with the windows.
    var workingReserve = 0

    /// The orders of the entries that the policy reads instead of walking every entry.
    var index: CacheIndex { entries.index }

    /// The most the cache holds: the budget less the working reserve, but never less than a
    /// quarter of the budget (a budget too small for the threads' work still caches something).
    var holdLimit: Int { max(budget - workingReserve, budget / 4) }

    init(budget: Int, policy: CachePolicy) {
        self.budget = budget
        self.policy = policy
        entries = EntryTable(index: CacheIndex())
    }

    /// A state for the default policy with images active for `activeSeconds` (tests build states
    /// by hand).
    init(budget: Int, activeSeconds: Double) {
        self.init(budget: budget, policy: CachePolicy(activeSeconds: activeSeconds))
    }

    mutating func nextTick() -> UInt64 {
        tick += 1
        return tick
    }

    /// The image was asked for since the last purge.
    func askedForSincePurge(_ entry: ImageEntry) -> Bool {
        entry.requestGeneration == purgeGeneration
    }

    // MARK: Requests

    /// A request for frame `index` of `entry` at `now`, noted under the lock
    /// (``FrameCache/frame(_:index:completion:)``): where its clients are
    /// (``ImageEntry/notePlaying(_:)``), when and since which purge it was asked for, and
    /// whether the windows must be worked out again. Returns what the request was.
    mutating func noteRequest(for index: Int, of entry: ImageEntry, now: Double) -> PlayCursors.Move {
        let move = entry.notePlaying(index)
        if move.movesPlayhead { entry.prefetchStalled = false }
        entry.lastRequest = now
        entry.requestGeneration = purgeGeneration
        entry.lastUse = nextTick()
        if !entry.isListedActive {
            admit(entry)
        } else if move.movesPlayhead && entry.playheadMoves == 1 {
            // A rendition first played (sought in before or not, ``ImageEntry/isSought``): it
            // may now be decoded ahead (rule 9 of ``CachePolicy``).
            admit(entry)
        }
        return move
    }

    /// The part of a hit answered without the lock (``FrameCache/cachedFrame(id:index:reader:)``)
    /// that needs it: the image is asked for since the last purge, and active.
    mutating func noteHit(on entry: ImageEntry, moved: Bool) {
        if moved { entry.prefetchStalled = false }
        entry.requestGeneration = purgeGeneration
        entry.lastUse = nextTick()
        if !entry.isListedActive { admit(entry) }
    }

    /// A request that missed waits for frame `index` of `entry` (`sought`: it was a seek).
    mutating func wait(
        _ completion: @escaping ImageEntry.Completion, for index: Int, of entry: ImageEntry, now: Double, sought: Bool
    ) {
        if entry.waiting[index] != nil { counters.coalesced += 1 }
        entry.addWaiter(completion, for: index, tick: nextTick(), now: now, sought: sought)
        waitingRequests += 1
    }

    // MARK: Accounting

    /// Stores frame `i` in `entry` and counts it.
    mutating func store(_ frame: CachedFrame, in entry: ImageEntry, at i: Int) {
        // The first real frame size replaces the guess windows were sized by.
        if entry.estimateIsGuess && entry.isListedActive { windowChanges += 1 }
        storedBytes += entry.store(frame, at: i)
    }

    mutating func evict(_ entry: ImageEntry, frame i: Int) {
        let heap = entry.frames[i].map(FreedMemory.heapBytes(of:)) ?? 0
        let bytes = entry.drop(i)
        if bytes > 0 {
            storedBytes -= bytes
            freed.note(heapBytes: heap)
            counters.evictions += 1
        }
    }

    /// Counts staged frames' bytes coming (positive) or going (negative).
    mutating func account(stagedBytes delta: Int) {
        storedBytes += delta
        stagedBytes += delta
    }

    /// Drops an entry's decoder (canvas and checkpoints) and with it its image, so the store may
    /// release the file (``ImageSource/image``).
    mutating func dropRenderer(_ entry: ImageEntry) {
        precondition(!entry.busy, "a decoder in use cannot be dropped")
        entry.renderer = nil
        updateRendererBytes(entry)
    }

    /// Re-reads what a decoder holds after it worked — its canvas, its checkpoints and its image
    /// (``ImageSource/residentBytes(of:)``) — and accounts the difference.
    mutating func updateRendererBytes(_ entry: ImageEntry) {
        let source = entry.source
        let image = source.renderer.map { ImageSource.residentBytes(of: $0.image, mappingBytes: mappingBytes) } ?? 0
        let now = source.renderer.map { $0.image.index.bytesPerFrame + $0.checkpointBytes + image } ?? 0
        let canvases = (source.rendererBytes - source.imageBytes) - (now - image)
        freed.note(heapBytes: FreedMemory.heapBytes(ofCanvases: canvases, canvasBytes: entry.decodedFrameBytes))
        storedBytes += now - source.rendererBytes
        decoderBytes += now - source.rendererBytes
        source.rendererBytes = now
        source.imageBytes = image
        reindex(source)
    }

    /// Places every rendition of `source` in the orders again: what its decoder holds, or whether
    /// a thread holds it, changed.
    func reindex(_ source: ImageSource) {
        for entry in source.entries { index.reindex(entry) }
    }

    /// Removes an image entirely — every rendition of it, and its decoder; returns the waiters.
    mutating func remove(_ id: String) -> [ImageEntry.Completion] {
        let source = sources.removeValue(forKey: id) ?? entries[id]?.source
        guard let source else { return [] }
        var waiters: [ImageEntry.Completion] = []
        for entry in source.entries { waiters += discard(entry) }
        storedBytes -= source.rendererBytes
        decoderBytes -= source.rendererBytes
        freed.note(
            heapBytes: FreedMemory.heapBytes(
                ofCanvases: source.rendererBytes - source.imageBytes, canvasBytes: source.decodedFrameBytes))
        windowChanges += 1
        return waiters
    }

    /// Takes one rendition out of the cache: its frames (accounted), its place in the maps and
    /// the hit tables; returns its waiters. The source's decoder stays.
    @discardableResult
    mutating func discard(_ entry: ImageEntry) -> [ImageEntry.Completion] {
        if entries[entry.id] === entry { entries[entry.id] = nil }
        entry.hitTables?.remove(entry)
        entry.source.entries.removeAll { $0 === entry }
        storedBytes -= entry.frameBytes
        freed.note(heapBytes: entry.frames.reduce(0) { $0 + ($1.map(FreedMemory.heapBytes(of:)) ?? 0) })
        if entry.isListedActive { windowChanges += 1 }
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
            && (entry.source.entries.count > 1 || entry.source.holdsNoDecoder)
    }

    // MARK: Decisions carried out

    /// Evicts what the policy says to make room for `extra` more bytes
    /// (``CachePolicy/eviction(toFit:in:reach:protecting:keep:now:)``); returns true when they fit.
    @discardableResult
    mutating func makeRoom(
        for extra: Int, reach: CachePolicy.EvictionReach, protecting requester: ImageEntry?,
        keep: Int? = nil, now: Double
    ) -> Bool {
        let plan = policy.eviction(toFit: extra, in: self, reach: reach, protecting: requester, keep: keep, now: now)
        for candidate in plan.candidates {
            switch candidate {
            case .frame(let entry, let i): evict(entry, frame: i)
            case .checkpoints(let entry):
                entry.renderer?.discardCheckpoints()
                updateRendererBytes(entry)
            case .decoder(let entry): dropRenderer(entry)
            case .staged(let owner, let key, let index): unstage(owner: owner, renditionKey: key, index: index)
            }
        }
        forgetEmptied(plan.candidates, sparing: requester)
        return heldBytes + extra <= holdLimit
    }

    /// Idle renditions that eviction left with nothing are forgotten at once, so that their own
    /// cost (``ImageEntry/overheadBytes``) leaves the budget with their last frame.
    private mutating func forgetEmptied(_ candidates: [CachePolicy.Candidate], sparing requester: ImageEntry?) {
        for candidate in candidates {
            let entry: ImageEntry
            switch candidate {
            case .frame(let e, _), .checkpoints(let e), .decoder(let e): entry = e
            case .staged: continue
            }
            if entry !== requester, !entry.isListedActive, entries[entry.id] === entry, isForgettable(entry) {
                forget(entry)
            }
        }
    }

    /// The job the policy gives a free decode thread (``CachePolicy/nextJob(in:now:largeAllowed:)``),
    /// taken: its image marked busy (or, for a job beside the decoder, its rendition marked).
    mutating func nextJob(now: Double, largeAllowed: Bool = true) -> CachePolicy.Job? {
        guard let job = policy.nextJob(in: self, now: now, largeAllowed: largeAllowed) else { return nil }
        if job.beside {
            job.entry.source.besideJob = job.entry
            counters.decodesBeside += 1
        } else {
            job.entry.busy = true
        }
        return job
    }

    /// The job ``nextJob(now:largeAllowed:)`` would take, without taking it.
    func peekJob(now: Double, largeAllowed: Bool = true) -> CachePolicy.Job? {
        policy.nextJob(in: self, now: now, largeAllowed: largeAllowed)
    }

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

    // MARK: Purges

    /// A warning: every window drops to one frame and everything outside it goes (posters stay),
    /// with checkpoints and every staged frame. Critical: every frame but the posters goes, with decoders.
    /// Either way, images not asked for since are no longer active (``CachePolicy/isActive(_:in:now:)``).
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
                entry.source.discardCheckpointsAfterJob = true
                if level == .critical { entry.source.dropRendererAfterJob = true }
            } else if level == .critical {
                dropRenderer(entry)
            } else if let renderer = entry.renderer {
                renderer.discardCheckpoints()
                updateRendererBytes(entry)
            }
        }
        // Only images asked for again are active now (requests waiting keep theirs).
        for entry in index.active.entries where entry.waitOrder.isEmpty { setIdle(entry) }
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
    /// One-off requests made beside their image's busy decoder (``CachePolicy/takesBeside(_:in:)``).
    var decodesBeside = 0
    /// Renditions replaced to keep an image's count within ``ImageSource/maxRenditions``.
    var renditionsReplaced = 0
    /// Staged frames that became frames of the stored image (no decode of their own).
    var adopted = 0
}
