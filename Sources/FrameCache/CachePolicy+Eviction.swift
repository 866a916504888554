/// Rule 8: what goes when the budget is full, cheapest loss first. One walk over the
/// candidates, in order, serves both eviction and the question "would there be room?", so the
/// two never disagree.
extension CachePolicy {
    /// How far eviction may go to make room.
    enum EvictionReach: Int, Comparable {
        /// What nobody is about to need: idle images' frames and decoders, frames behind
        /// playheads, and the checkpoints and canvases of decoders not in use (a canvas is
        /// restored from a cached frame when needed again).
        case outsideWindows
        /// Also frames inside other images' windows, farthest ahead first (someone waits).
        case inWindows
        /// Also posters (critical pressure, or the last resort to keep the budget).
        case posters

        static func < (a: EvictionReach, b: EvictionReach) -> Bool { a.rawValue < b.rawValue }
    }

    /// One thing eviction can take.
    enum Candidate {
        case frame(ImageEntry, Int)
        case checkpoints(ImageEntry)
        /// The decoder; `releasingImage` for idle images (their file may be unmapped).
        case decoder(ImageEntry, releasingImage: Bool)
        /// A frame of an image not stored yet (CacheState+Staging).
        case staged(owner: String, renditionKey: String, index: Int)
    }

    /// What to evict, in order, and whether that makes the room asked for.
    struct Eviction {
        var candidates: [Candidate] = []
        var fits: Bool
    }

    /// What to evict so that `extra` more bytes fit in the hold limit (the budget less the
    /// working reserve), going no further than `reach`; never frame `keep` of `requester` (the
    /// frame about to be stored), nor `requester`'s decoder. When even all of that is not enough,
    /// everything within reach, and `fits` false.
    func eviction(
        toFit extra: Int, in state: CacheState, reach: EvictionReach, protecting requester: ImageEntry?,
        keep: Int? = nil, now: Double
    ) -> Eviction {
        if state.heldBytes + extra <= state.holdLimit { return Eviction(fits: true) }
        var plan = Eviction(fits: false)
        var freed = 0
        walkCandidates(in: state, reach: reach, requester: requester, keep: keep, now: now) { candidate, bytes in
            plan.candidates.append(candidate)
            freed += bytes
            return state.heldBytes + extra - freed > state.holdLimit
        }
        plan.fits = state.heldBytes + extra - freed <= state.holdLimit
        return plan
    }

    /// Whether ``eviction(toFit:in:reach:protecting:keep:now:)`` would make the room, without
    /// listing what.
    func wouldFindRoom(
        for extra: Int, in state: CacheState, reach: EvictionReach, protecting requester: ImageEntry?, now: Double
    ) -> Bool {
        if state.heldBytes + extra <= state.holdLimit { return true }
        var freed = 0
        walkCandidates(in: state, reach: reach, requester: requester, keep: nil, now: now) { _, bytes in
            freed += bytes
            return state.heldBytes + extra - freed > state.holdLimit
        }
        return state.heldBytes + extra - freed <= state.holdLimit
    }

    /// Calls `take` with each candidate and the bytes it would free, in eviction order, while
    /// `take` returns true. The candidates come from the state's orders (``CacheIndex``), so the
    /// walk looks at the entries it takes from — the idle ones in the order they give things up,
    /// the active ones whose windows leave frames outside — not at every entry held.
    private func walkCandidates(
        in state: CacheState, reach: EvictionReach, requester: ImageEntry?, keep: Int?, now: Double,
        _ take: (Candidate, Int) -> Bool
    ) {
        let index = state.index
        let protected = { (entry: ImageEntry, i: Int) in entry === requester && i == keep }
        // A decoder in use by a rendition decoded ahead (or by the requester) stays in steps 1
        // and 3; a decoder shared by several renditions is offered once.
        func keptDecoder(_ source: ImageSource) -> Bool {
            source === requester?.source || source.entries.contains { $0.isListedActive && !$0.onDemand }
        }
        var offeredDecoders: Set<ObjectIdentifier> = []
        // 0. Frames of uploads in progress, whose owners were used least recently first: they
        //    may never be an image.
        let walkedAll = state.walkStaged { owner, key, index, bytes in
            take(.staged(owner: owner, renditionKey: key, index: index), bytes)
        }
        if !walkedAll { return }
        // 1. Idle images and renditions made on demand: everything but pinned posters (the
        //    full-size ones, those of renditions being played), renditions never played (asked
        //    for a frame, not followed) before played ones, least recently used first — so a
        //    client asking for one frame in size after size churns its own frames, not those
        //    of players whose renditions are made on demand. Within one, the frame needed again
        //    last goes first (a played rendition made on demand keeps its next frames).
        var givers = GiveUpOrder(idle: index.idle, onDemand: index.onDemand.entries)
        while let entry = givers.next() {
            index.examined += 1
            guard entry !== requester, entry.heldBytes > (entry.pinsPoster ? (entry.frames.first??.count ?? 0) : 0)
            else { continue }
            for i in entry.framesNeededLastFirst() where i != 0 || !entry.pinsPoster {
                if let png = entry.frames[i], !take(.frame(entry, i), png.count) { return }
            }
            let source = ObjectIdentifier(entry.source)
            if !entry.busy, entry.renderer != nil || entry.rendererBytes > 0, !keptDecoder(entry.source),
                offeredDecoders.insert(source).inserted,
                !take(.decoder(entry, releasingImage: true), entry.rendererBytes)
            {
                return
            }
        }
        // 2. Frames outside the windows of active images, least recently used image first, the
        //    frame needed again last first (the one played most recently, as the animation
        //    loops); the frame just behind each playhead (the resume anchor) stays. Only windows
        //    shorter than their animation leave frames outside.
        let partial = index.partial.entries.sorted { $0.usedBefore($1) }
        index.examined += partial.count
        for entry in partial {
            for i in entry.framesNeededLastFirst()
            where i != 0 && !entry.inWindow(i) && !entry.isResumeAnchor(i) && !protected(entry, i) {
                if let png = entry.frames[i], !take(.frame(entry, i), png.count) { return }
            }
        }
        // 3. Checkpoints, then canvases, of decoders not in use, least recently used image first.
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
        if stopped { return }
        index.decoders.forEachInOrder { _, entry in
            guard !inUse(entry), offeredDecoders.insert(ObjectIdentifier(entry.source)).inserted else { return true }
            stopped = !take(.decoder(entry, releasingImage: false), entry.rendererBytes - entry.renderer!.checkpointBytes)
            return !stopped
        }
        if stopped { return }
        // 4. Resume anchors: first of images whose decoder still holds its canvas (they do not
        //    need them), then the rest.
        for entry in partial.sorted(by: { ($0.renderer == nil ? 1 : 0) < ($1.renderer == nil ? 1 : 0) }) {
            let i = (entry.playhead - 1 + entry.frameCount) % max(1, entry.frameCount)
            guard entry.isExact, i > 0, entry.frameCount > 1, !entry.inWindow(i), !protected(entry, i) else { continue }
            if let png = entry.frames[i], !take(.frame(entry, i), png.count) { return }
        }
        guard reach >= .inWindows else { return }
        // 5. In-window frames: other images first (least recently used), farthest ahead first.
        var byAge: [ImageEntry] = []
        index.byUse.forEachInOrder { _, entry in
            if !entry.onDemand && entry !== requester { byAge.append(entry) }
            return true
        }
        index.examined += byAge.count
        for entry in byAge + (requester.map { [$0] } ?? []) {
            for step in stride(from: entry.window - 1, through: 0, by: -1) {
                let i = (entry.playhead + step) % max(1, entry.frameCount)
                if i == 0 || protected(entry, i) { continue }
                if let png = entry.frames[i], !take(.frame(entry, i), png.count) { return }
            }
        }
        guard reach >= .posters else { return }
        // 6. Posters, least recently used first.
        index.posters.forEachInOrder { _, entry in
            index.examined += 1
            guard !protected(entry, 0), let png = entry.frames.first ?? nil else { return true }
            return take(.frame(entry, 0), png.count)
        }
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
