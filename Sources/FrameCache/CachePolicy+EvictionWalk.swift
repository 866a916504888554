/// Rule 8's walk over what eviction can take, cheapest loss first, one step per kind of loss
/// (``CachePolicy/eviction(toFit:in:reach:protecting:keep:now:)``). Each step offers its
/// candidates to `take` and returns false once `take` says that is enough. The candidates come
/// from the state's orders (``CacheIndex``), so the walk looks at the entries it takes from — the
/// idle ones in the order they give things up, the active ones whose windows leave frames
/// outside — not at every entry held.
struct EvictionWalk {
    let state: CacheState
    /// The entry the room is for: its frame `keep` and its decoder stay.
    let requester: ImageEntry?
    let keep: Int?
    let take: (CachePolicy.Candidate, Int) -> Bool
    /// Images whose decoder was offered already (one decoder serves all renditions of an image).
    private var offeredDecoders: Set<ObjectIdentifier> = []
    /// Active renditions whose windows are shorter than the animation, least recently used
    /// first (found by step 2, read again by step 4).
    private var partial: [ImageEntry] = []

    init(
        state: CacheState, requester: ImageEntry?, keep: Int?, take: @escaping (CachePolicy.Candidate, Int) -> Bool
    ) {
        self.state = state
        self.requester = requester
        self.keep = keep
        self.take = take
    }

    private var index: CacheIndex { state.index }

    private func protected(_ entry: ImageEntry, _ i: Int) -> Bool { entry === requester && i == keep }

    /// Offers frame `i` of `entry` if it is cached; false when `take` says stop. The last thing
    /// an idle rendition holds takes the rendition's own cost with it (``CacheState/makeRoom``
    /// forgets it).
    private func offerFrame(_ entry: ImageEntry, _ i: Int) -> Bool {
        guard let png = entry.frames[i] else { return true }
        let last =
            entry.cachedCount == 1 && entry !== requester && !entry.isListedActive && entry.waitOrder.isEmpty
            && (entry.source.entries.count > 1 || entry.source.holdsNoDecoder)
        return take(.frame(entry, i), png.count + (last ? entry.countedOverheadBytes : 0))
    }

    /// 0. Frames of uploads in progress, whose owners were used least recently first: they may
    ///    never be an image.
    func stagedFrames() -> Bool {
        state.walkStaged { owner, key, index, bytes in
            take(.staged(owner: owner, renditionKey: key, index: index), bytes)
        }
    }

    /// 1. Idle images and renditions made on demand: everything but pinned posters (the
    ///    full-size ones, those of renditions being played), renditions never played (asked for a
    ///    frame, not followed) before played ones, least recently used first — so a client asking
    ///    for one frame in size after size churns its own frames, not those of players whose
    ///    renditions are made on demand. Within one, the frame needed again last goes first (a
    ///    played rendition made on demand keeps its next frames); then its image's decoder,
    ///    unless a rendition decoded ahead (or the requester) uses it.
    mutating func idleImages() -> Bool {
        func keptDecoder(_ source: ImageSource) -> Bool {
            source === requester?.source || source.entries.contains { $0.isListedActive && !$0.onDemand }
        }
        var givers = GiveUpOrder(idle: index.idle, onDemand: index.onDemand.entries)
        while let entry = givers.next() {
            index.examined += 1
            guard entry !== requester, entry.heldBytes > (entry.pinsPoster ? (entry.frames.first??.count ?? 0) : 0)
            else { continue }
            for i in entry.framesNeededLastFirst() where i != 0 || !entry.pinsPoster {
                if !offerFrame(entry, i) { return false }
            }
            let source = ObjectIdentifier(entry.source)
            if !entry.busy, entry.renderer != nil || entry.rendererBytes > 0, !keptDecoder(entry.source),
                offeredDecoders.insert(source).inserted,
                !take(.decoder(entry), entry.rendererBytes)
            {
                return false
            }
        }
        return true
    }

    /// 2. Frames outside the windows of active images, least recently used image first, the frame
    ///    needed again last first (the one played most recently, as the animation loops); the
    ///    frame just behind each playhead (the resume anchor) stays. Only windows shorter than
    ///    their animation leave frames outside.
    mutating func framesOutsideWindows() -> Bool {
        partial = index.partial.entries.sorted { $0.usedBefore($1) }
        index.examined += partial.count
        for entry in partial {
            for i in entry.framesNeededLastFirst()
            where i != 0 && !entry.inWindow(i) && !entry.isResumeAnchor(i) && !protected(entry, i) {
                if !offerFrame(entry, i) { return false }
            }
        }
        return true
    }

    /// 3. Checkpoints, then decoders (canvas and image) not in use, least recently used image first.
    mutating func idleDecoders() -> Bool {
        let requester = requester
        func inUse(_ entry: ImageEntry) -> Bool { entry.source === requester?.source || entry.busy || entry.renderer == nil }
        var offeredCheckpoints = offeredDecoders
        var stopped = false
        index.decoders.forEachInOrder { _, entry in
            index.examined += 1
            guard !inUse(entry), offeredCheckpoints.insert(ObjectIdentifier(entry.source)).inserted else { return true }
            let bytes = entry.renderer!.checkpointBytes
            stopped = bytes > 0 && !take(.checkpoints(entry), bytes)
            return !stopped
        }
        if stopped { return false }
        var offered = offeredDecoders
        index.decoders.forEachInOrder { _, entry in
            guard !inUse(entry), offered.insert(ObjectIdentifier(entry.source)).inserted else { return true }
            stopped = !take(.decoder(entry), entry.rendererBytes - entry.renderer!.checkpointBytes)
            return !stopped
        }
        offeredDecoders = offered
        return !stopped
    }

    /// 4. Resume anchors: first of images whose decoder still holds its canvas (they do not need
    ///    them), then the rest.
    func resumeAnchors() -> Bool {
        for entry in partial.sorted(by: { ($0.renderer == nil ? 1 : 0) < ($1.renderer == nil ? 1 : 0) }) {
            let i = (entry.playhead - 1 + entry.frameCount) % max(1, entry.frameCount)
            guard entry.isExact, i > 0, entry.frameCount > 1, !entry.inWindow(i), !protected(entry, i) else { continue }
            if !offerFrame(entry, i) { return false }
        }
        return true
    }

    /// 5. Frames inside active windows (someone waits): other images first, least recently used
    ///    first, then the requester's; within one, farthest ahead first. Posters stay.
    ///    Only images holding a frame besides their poster are walked (``CacheIndex/holders``),
    ///    as far as they are taken from: with tens of thousands of active images each holding a
    ///    frame ahead, the first few make the room (docs/benchmarks/scale.md, "Cold frames with
    ///    the budget full").
    func framesInWindows() -> Bool {
        var stopped = false
        index.holders.forEachInOrder { _, entry in
            guard !entry.onDemand && entry !== requester else { return true }
            index.examined += 1
            stopped = !offerWindow(entry)
            return !stopped
        }
        if stopped { return false }
        return requester.map(offerWindow) ?? true
    }

    /// Offers the frames of `entry`'s window, farthest ahead first, its poster and the protected
    /// frame apart; false when `take` says stop.
    private func offerWindow(_ entry: ImageEntry) -> Bool {
        for step in stride(from: entry.window - 1, through: 0, by: -1) {
            let i = (entry.playhead + step) % max(1, entry.frameCount)
            if i == 0 || protected(entry, i) { continue }
            if !offerFrame(entry, i) { return false }
        }
        return true
    }

    /// 6. Posters, least recently used first.
    func posters() -> Bool {
        var stopped = false
        index.posters.forEachInOrder { _, entry in
            index.examined += 1
            guard !protected(entry, 0), entry.frames.first ?? nil != nil else { return true }
            stopped = !offerFrame(entry, 0)
            return !stopped
        }
        return !stopped
    }
}

/// Rule 8's first step in order: idle entries (in their heap's order, ``CacheIndex/idle``)
/// merged with the active renditions made on demand (few; ordered here by
/// ``ImageEntry/givenUpBefore(_:)``).
private struct GiveUpOrder {
    private var idle: EntryHeap<CacheIndex.IdleKey>.OrderedIterator
    private var nextIdle: (CacheIndex.IdleKey, ImageEntry)?
    private let onDemand: [ImageEntry]
    private var nextOnDemand = 0

    init(idle heap: EntryHeap<CacheIndex.IdleKey>, onDemand: [ImageEntry]) {
        idle = heap.makeOrderedIterator()
        nextIdle = idle.next()
        self.onDemand = onDemand.sorted { $0.givenUpBefore($1) }
    }

    mutating func next() -> ImageEntry? {
        if let (key, entry) = nextIdle,
            nextOnDemand == onDemand.count || key < CacheIndex.IdleKey(onDemand[nextOnDemand])
        {
            nextIdle = idle.next()
            return entry
        }
        guard nextOnDemand < onDemand.count else { return nil }
        nextOnDemand += 1
        return onDemand[nextOnDemand - 1]
    }
}
