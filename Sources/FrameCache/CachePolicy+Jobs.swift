import AnimatedImage

/// Rules 1–6: which frame a decode thread makes next — when it is free (``nextJob(in:now:largeAllowed:)``)
/// and after each frame of a run (``continuation(of:in:now:)``).
extension CachePolicy {
    /// A unit of background work: render frame `index` of `entry`'s image and encode it for
    /// `entry`, and for the image's other renditions that want it too (``also``).
    struct Job {
        let entry: ImageEntry
        let index: Int
        /// Someone is waiting for it (as opposed to decoding ahead).
        let urgent: Bool
        /// Other renditions of the image that want frame `index` (asked for, or in their
        /// windows): encoded from the same canvas, so the frame is composited once. Found when
        /// the job is taken, and again once the canvas is made (``renditionsWanting(_:_:in:)``),
        /// so requests that arrived meanwhile share it too.
        var also: [ImageEntry]
        /// What scaling and encoding for any rendition of the image may allocate at most
        /// (``RenditionEncoder/workingBytes(_:width:height:)``), reserved with the render.
        let renditionWorkBytes: Int
        /// Made beside the image's decoder, which another thread holds, on a decoder of the
        /// job's own (rule 4).
        var beside = false
        /// A frame before `index` whose PNG the renderer may resume from, when replaying would
        /// cost more: set by the decode thread once it has the image (the disposals are its).
        var resume: (frame: Int, png: FrameBytes)? = nil
    }

    /// A decode thread's run on one image so far: what ``continuation(of:in:now:)`` decides on.
    struct Run {
        /// The rendition whose job the thread just finished; the thread holds its image's decoder.
        var held: ImageEntry
        /// Frames made in the run, the one just made included.
        var frames: Int
        /// Frames made since the last one someone waited for, that one not counted (nil: none in
        /// this run was waited for).
        var sinceWaited: Int?
    }

    /// The job a free decode thread takes (rules 1, 2, 4, 6), or nil when there is none; with
    /// `largeAllowed` false, only a job on an image that is not large.
    func nextJob(in state: CacheState, now: Double, largeAllowed: Bool = true) -> Job? {
        // A one-off request on an image whose players are about waits out its patience (rule 2);
        // other waiting requests come first, a player's before a one-off (rule 1).
        if let entry = oldestWaiting(
            in: state, excluding: nil, largeAllowed: largeAllowed, besideAllowed: true,
            skipping: { holdsBack($0, in: state, now: now) }),
            let index = entry.nextWaitingFrame
        {
            var job = job(entry, index, urgent: true, in: state)
            if entry.busy {  // the one-off's rendition alone: the thread that holds the image serves the rest
                job.beside = true
                job.also = []
            }
            return job
        }
        guard let (entry, index, _) = earliestPrefetch(in: state, now: now, excluding: nil, largeAllowed: largeAllowed),
            roomForPrefetch(entry.encodedFrameEstimate, for: entry, in: state, now: now)
        else { return nil }
        return job(entry, index, urgent: false, in: state)
    }

    /// What the thread that holds `run.held` does after a frame (rules 2 and 5): the frames waited
    /// for on this image first; then its next frame ahead, for runs of up to ``Tuning/maxRun``
    /// frames, unless another image's next frame is due within ``Tuning/runMarginSeconds`` or
    /// requests wait on other images (but for ``Tuning/aheadOfWaiter`` frames after one someone
    /// waited for). Nil: the run ends and the image is handed back.
    ///
    /// The image's renditions count as one: a frame waited for on any of them comes first (those
    /// of renditions being played before the others, ``ImageEntry/waitsBefore(_:)``), and a
    /// run goes on with whichever of them is decoded ahead and has a frame to make.
    func continuation(of run: Run, in state: CacheState, now: Double) -> Job? {
        let held = run.held
        let renditions = held.source.entries.filter { state.entries[$0.id] === $0 && held.source.besideJob !== $0 }
        // The next frame to make ahead, found only when it is asked about. A plain loop: a lazy
        // `compactMap(…).first` runs its closure twice for the element it returns (to filter,
        // then to read), and a hit on an event loop may move the playhead — and so
        // `nextPrefetch` — in between, making the second run nil (a crash in the force unwrap).
        func ahead() -> (ImageEntry, Int)? {
            for entry in renditions {
                guard !entry.prefetchStalled, entry.window > 0, isActive(entry, in: state, now: now),
                    let index = entry.nextPrefetch
                else { continue }
                return (entry, index)
            }
            return nil
        }
        if let waiting = renditions.filter({ !$0.waitOrder.isEmpty }).min(by: { $0.waitsBefore($1) }),
            let waited = waiting.nextWaitingFrame
        {
            // Only one-off requests wait (rule 2): a player's next frame due within the margin is
            // made first (its decoder is here, in order: one frame decode) while the one-off has
            // waited less than its patience, so it (a new player's first frame, too) is never
            // starved.
            if !waiting.waitsAsPlayer, withinPatience(waiting, in: state, now: now),
                let (entry, index) = ahead(), entry.isPlayed,
                entry.deadline(ofFrame: index) < now + tuning.runMarginSeconds,
                roomForPrefetch(entry.encodedFrameEstimate, for: entry, in: state, now: now)
            {
                return job(entry, index, urgent: false, in: state)
            }
            // Players of this image are about: the one-off waits out its patience with the image
            // handed back, ready for their next requests.
            if holdsBack(waiting, in: state, now: now) { return nil }
            return job(waiting, waited, urgent: true, in: state)
        }
        guard run.frames < tuning.maxRun, let (entry, index) = ahead() else { return nil }
        if oldestWaiting(in: state, excluding: held) != nil {
            guard let since = run.sinceWaited, since < tuning.aheadOfWaiter else { return nil }
        } else if let (_, _, other) = earliestPrefetch(in: state, now: now, excluding: held),
            other < now + tuning.runMarginSeconds
        {
            return nil
        }
        guard roomForPrefetch(entry.encodedFrameEstimate, for: entry, in: state, now: now) else { return nil }
        return job(entry, index, urgent: false, in: state)
    }

    private func job(_ entry: ImageEntry, _ index: Int, urgent: Bool, in state: CacheState) -> Job {
        let source = entry.source
        let work = source.entries.map {
            RenditionEncoder.workingBytes($0.rendition, width: source.canvasWidth, height: source.canvasHeight)
        }
        return Job(
            entry: entry, index: index, urgent: urgent, also: renditionsWanting(entry, index, in: state),
            renditionWorkBytes: work.max() ?? 0)
    }

    /// The image's renditions other than `entry` that want frame `index` now (but one whose
    /// request is being made beside the decoder, ``ImageSource/besideJob``): a composite made for
    /// one is encoded for each.
    func renditionsWanting(_ entry: ImageEntry, _ index: Int, in state: CacheState) -> [ImageEntry] {
        entry.source.entries.filter {
            $0 !== entry && state.entries[$0.id] === $0 && $0.wants(index) && entry.source.besideJob !== $0
        }
    }

    /// Rule 1: the entry whose waiting request comes first among those a free thread may take:
    /// on an image no thread holds, or — with `besideAllowed` — one to make beside its image's
    /// busy decoder (rule 4); never one whose request is being made beside already. Players'
    /// requests first, then the others, each first come first served
    /// (``CacheIndex/waitingPlayers``, ``CacheIndex/waitingOthers``): the walk stops at the first
    /// a thread may take.
    private func oldestWaiting(
        in state: CacheState, excluding excluded: ImageEntry?, largeAllowed: Bool = true, besideAllowed: Bool = false,
        skipping skipped: (ImageEntry) -> Bool = { _ in false }
    ) -> ImageEntry? {
        var found: ImageEntry? = nil
        func mayTake(_ entry: ImageEntry) -> Bool {
            state.index.examined += 1
            return (!entry.busy || besideAllowed && takesBeside(entry, in: state)) && entry.source.besideJob !== entry
                && !entry.waitOrder.isEmpty && entry !== excluded && (largeAllowed || !isLarge(entry, in: state))
                && !skipped(entry)
        }
        for waiting in [state.index.waitingPlayers, state.index.waitingOthers] where found == nil {
            waiting.forEachInOrder { _, entry in
                if mayTake(entry) { found = entry }
                return found == nil
            }
        }
        return found
    }

    /// Rule 6: the decode-ahead due soonest — the image, its frame, and when a real-time player
    /// will ask for it. Walks the entries due decode-ahead in the order of their deadlines as last
    /// placed (``CacheIndex/decodeAhead``), which are never later than the real ones, and stops
    /// once the next one's placed deadline is later than the best real deadline found.
    private func earliestPrefetch(
        in state: CacheState, now: Double, excluding excluded: ImageEntry?, largeAllowed: Bool = true
    ) -> (ImageEntry, Int, deadline: Double)? {
        var best: (ImageEntry, Int, deadline: Double)? = nil
        state.index.decodeAhead.forEachInOrder { key, entry in
            if let best, key.deadline >= best.deadline { return false }
            state.index.examined += 1
            guard !entry.busy, entry !== excluded, entry.window > 0, !entry.prefetchStalled,
                isActive(entry, in: state, now: now), largeAllowed || !isLarge(entry, in: state),
                let index = entry.nextRunStart
            else { return true }
            let deadline = entry.deadline(ofFrame: index)
            if best == nil || deadline < best!.deadline { best = (entry, index, deadline) }
            return true
        }
        return best
    }

    /// Rule 6: decoding ahead may only displace what nobody is about to need: frames of idle
    /// images and behind playheads, and the checkpoints and canvases of decoders not in use.
    func roomForPrefetch(_ bytes: Int, for requester: ImageEntry, in state: CacheState, now: Double) -> Bool {
        eviction(toFit: bytes, in: state, reach: .outsideWindows, protecting: requester, now: now).fits
    }
}
