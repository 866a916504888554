import AnimatedImage

/// Choosing the decode threads' work: requests that wait come first, first come first served;
/// then decode-ahead, earliest deadline first — the frame a real-time player will ask for
/// soonest — as long as there is room for it. Large jobs (``isLarge(_:)``) are left to the
/// threads the lane for the others does not keep.
extension CacheState {
    /// A unit of background work: render frame `index` of `entry`'s image and encode it for
    /// `entry`, and for the image's other renditions that want it too (``also``).
    struct Job {
        let entry: ImageEntry
        let index: Int
        /// Someone is waiting for it (as opposed to decoding ahead).
        let urgent: Bool
        /// Other renditions of the image that want frame `index` (asked for, or in their
        /// windows): encoded from the same canvas, so the frame is composited once. Found when
        /// the job is taken, and again once the canvas is made (``CacheState/renditionsWanting(_:)``),
        /// so requests that arrived meanwhile share it too.
        var also: [ImageEntry]
        /// What scaling and encoding for any rendition of the image may allocate at most
        /// (``RenditionEncoder/workingBytes(_:width:height:)``), reserved with the render.
        let renditionWorkBytes: Int
        /// Made beside the image's decoder, which another thread holds, on a decoder of the
        /// job's own (``CacheState/takesBeside(_:)``).
        var beside = false
        /// A frame before `index` whose PNG the renderer may resume from, when replaying would
        /// cost more: set by the decode thread once it has the image (the disposals are its).
        var resume: (frame: Int, png: FrameBytes)? = nil
    }

    /// The next job, with its image marked busy; with `largeAllowed` false, only a job on an
    /// image that is not large (``isLarge(_:)``). `oneOffPatience` as in
    /// ``continuation(of:run:maxRun:margin:sinceWaited:aheadOfWaiter:oneOffPatience:now:)``.
    mutating func nextJob(now: Double, largeAllowed: Bool = true, oneOffPatience: Double = 0) -> Job? {
        guard let job = peekJob(now: now, largeAllowed: largeAllowed, oneOffPatience: oneOffPatience) else {
            return nil
        }
        if job.beside {
            job.entry.source.besideJob = job.entry
            counters.decodesBeside += 1
        } else {
            job.entry.busy = true
        }
        return job
    }

    /// The job ``nextJob(now:largeAllowed:oneOffPatience:)`` would hand out, without taking it.
    func peekJob(now: Double, largeAllowed: Bool = true, oneOffPatience: Double = 0) -> Job? {
        // A one-off request on an image whose players are about waits out its patience
        // (``holdsBack``); other waiting requests come first, a player's before a one-off.
        if let entry = oldestWaiting(
            excluding: nil, largeAllowed: largeAllowed, besideAllowed: true,
            skipping: { self.holdsBack($0, now: now, oneOffPatience: oneOffPatience) }),
            let index = entry.nextWaitingFrame
        {
            var job = job(entry, index, urgent: true)
            if entry.busy {  // the one-off's rendition alone: the thread that holds the image serves the rest
                job.beside = true
                job.also = []
            }
            return job
        }
        guard let (entry, index, _) = earliestPrefetch(now: now, excluding: nil, largeAllowed: largeAllowed),
            roomForPrefetch(entry.encodedFrameEstimate, for: entry, now: now)
        else { return nil }
        return job(entry, index, urgent: false)
    }

    /// What the thread that holds `entry` should do after a frame: the frames waited for on
    /// this image first; then its next frame ahead, for runs of up to `maxRun` frames (a run
    /// of one image's frames reuses its canvas instead of restoring another's), unless another
    /// image's next frame is due within `margin` seconds or requests wait on other images.
    ///
    /// Requests waiting elsewhere stop a run, except for the `aheadOfWaiter` frames that follow
    /// a frame someone waited for: that client asks for the next one within a frame's delay,
    /// and a server that only ever answers waiting requests would leave every client waiting
    /// (under overload, serving the late first must not stop anyone from getting ahead).
    ///
    /// The image's renditions count as one: a frame waited for on any of them comes first (those
    /// of renditions being played before the others, ``ImageEntry/waitsBefore(_:)``), and a
    /// run goes on with whichever of them is decoded ahead and has a frame to make.
    func continuation(
        of held: ImageEntry, run: Int, maxRun: Int, margin: Double,
        sinceWaited: Int?, aheadOfWaiter: Int, oneOffPatience: Double, now: Double
    ) -> Job? {
        let renditions = held.source.entries.filter { entries[$0.id] === $0 && held.source.besideJob !== $0 }
        // The next frame to make ahead, found only when it is asked about.
        func ahead() -> (ImageEntry, Int)? {
            renditions.lazy.compactMap({ entry -> (ImageEntry, Int)? in
                guard !entry.prefetchStalled, entry.window > 0, self.isActive(entry, now: now),
                    let index = entry.nextPrefetch
                else { return nil }
                return (entry, index)
            }).first
        }
        if let waiting = renditions.filter({ !$0.waitOrder.isEmpty }).min(by: { $0.waitsBefore($1) }),
            let waited = waiting.nextWaitingFrame
        {
            // Only one-off requests wait (for renditions nobody plays, or seeks far from every
            // player, ``ImageEntry/waitsAsPlayer``): a player's next frame due within `margin`
            // is made first (its decoder is here, in order: one frame decode), or one-off
            // requests would keep every player's decode-ahead from running — but only while
            // the one-off has waited less than `oneOffPatience`, so it (a new player's first
            // frame, too) is never starved.
            if !waiting.waitsAsPlayer, now - waiting.waitingSinceSeconds < oneOffPatience, let (entry, index) = ahead(),
                entry.isPlayed, entry.deadline(ofFrame: index) < now + margin,
                roomForPrefetch(entry.encodedFrameEstimate, for: entry, now: now)
            {
                return job(entry, index, urgent: false)
            }
            // Players of this image are about: the one-off waits out its patience with the
            // image handed back, ready for their next requests (``holdsBack``).
            if holdsBack(waiting, now: now, oneOffPatience: oneOffPatience) { return nil }
            return job(waiting, waited, urgent: true)
        }
        guard run < maxRun, let (entry, index) = ahead() else { return nil }
        if oldestWaiting(excluding: held) != nil {
            guard let since = sinceWaited, since < aheadOfWaiter else { return nil }
        } else if let (_, _, other) = earliestPrefetch(now: now, excluding: held), other < now + margin {
            return nil
        }
        guard roomForPrefetch(entry.encodedFrameEstimate, for: entry, now: now) else { return nil }
        return job(entry, index, urgent: false)
    }

    private func job(_ entry: ImageEntry, _ index: Int, urgent: Bool) -> Job {
        let source = entry.source
        let work = source.entries.map {
            RenditionEncoder.workingBytes($0.rendition, width: source.canvasWidth, height: source.canvasHeight)
        }
        return Job(
            entry: entry, index: index, urgent: urgent, also: renditionsWanting(entry, index),
            renditionWorkBytes: work.max() ?? 0)
    }

    /// The image's renditions other than `entry` that want frame `index` now (but one whose
    /// request is being made beside the decoder, ``ImageSource/besideJob``).
    func renditionsWanting(_ entry: ImageEntry, _ index: Int) -> [ImageEntry] {
        entry.source.entries.filter {
            $0 !== entry && entries[$0.id] === $0 && $0.wants(index) && entry.source.besideJob !== $0
        }
    }

    /// Whether a waiting request on `entry`, whose image's decoder a thread holds, may be made
    /// beside it on a decoder of its own: a one-off request (not a player's: players share the
    /// image's decoder, its canvas in playback order and its checkpoints; not for frame 0, which
    /// a new viewer asks first), on an image that is not large, when no other request of the
    /// image is being made beside, while one of the image's players is short of frames (fewer
    /// than ``playerReadyFrames`` ready). The players' run then goes on: at the start of
    /// playback, when every frame of every rendition is being made for the first time, a one-off
    /// that waited for the decoder and then replayed to a far frame held all of them up
    /// (BENCHMARKS.md, "Renditions: abuse"); once their frames are ready,
    /// one-offs wait for the decoder as before, which replays from its checkpoints. The decoder
    /// beside keeps nothing (no checkpoints; dropped after the job), so it replays from a key
    /// frame or resumes from a cached full-size frame or a seek anchor each time. (A thread of
    /// its own for these, at the lowest priority, was tried: preempted while it held the
    /// cache's lock, it stalled every request for up to 0.3 s.)
    func takesBeside(_ entry: ImageEntry) -> Bool {
        entry.busy && entry.source.besideJob == nil && !entry.waitsAsPlayer && !isLarge(entry)
            && entry.nextWaitingFrame != 0
            && entry.source.entries.contains {
                isPlayer($0) && $0.window > 0 && $0.framesReady(upTo: Self.playerReadyFrames) < Self.playerReadyFrames
            }
    }

    /// One of the cache's renditions that a client moved on in (``ImageEntry/movedOn``): the
    /// players ``holdsBack(_:now:oneOffPatience:)`` and ``takesBeside(_:)`` look for.
    private func isPlayer(_ entry: ImageEntry) -> Bool {
        entry.movedOn && entries[entry.id] === entry
    }

    /// Frames ready from a player's playhead below which it is short of frames: one-off
    /// requests of its image are then made beside its decoder (``takesBeside(_:)``).
    static let playerReadyFrames = 3

    /// A large job: its image's canvas is more than the cache plans for
    /// (``largestPlannedCanvas``, a quarter of the budget) — a 49 MP frame takes seconds to
    /// decode. The decode threads take large jobs on all of them but one (the lane kept for the
    /// rest, ``FrameCache/largeJobs``), so the other images' jobs never queue behind them.
    func isLarge(_ entry: ImageEntry) -> Bool {
        entry.decodedFrameBytes > largestPlannedCanvas
    }

    /// How recently a client must have moved on in one of an image's renditions for one-off
    /// requests of that image to be held back (``holdsBack``): players ask every frame's delay.
    static let playersPresentSeconds = 0.5

    /// Whether a one-off request waiting on `entry` (for a rendition nobody plays, or a seek) waits
    /// out its patience even with a decode thread free: while players of the same image are
    /// about (a rendition moved on within ``playersPresentSeconds``). Their next requests then
    /// find the image's decoder free instead of behind a replay to some far frame — a client
    /// asking for one frame in size after size gets about one a `oneOffPatience` while they play.
    /// A request for frame 0 is not held back: a new viewer starts there (its first request
    /// looks like a one-off), and the first frame costs one frame decode, no replay.
    func holdsBack(_ entry: ImageEntry, now: Double, oneOffPatience: Double) -> Bool {
        guard oneOffPatience > 0, !entry.waitsAsPlayer, now - entry.waitingSinceSeconds < oneOffPatience,
            entry.nextWaitingFrame != 0
        else {
            return false
        }
        return entry.source.entries.contains { isPlayer($0) && now - $0.lastRequest < Self.playersPresentSeconds }
    }

    /// The entry whose waiting request came first among those a free thread may take: on an
    /// image no thread holds, or — with `besideAllowed` — one to make beside its image's busy
    /// decoder (``takesBeside(_:)``); never one whose request is being made beside already.
    private func oldestWaiting(
        excluding excluded: ImageEntry?, largeAllowed: Bool = true, besideAllowed: Bool = false,
        skipping skipped: (ImageEntry) -> Bool = { _ in false }
    ) -> ImageEntry? {
        var best: ImageEntry? = nil
        for entry in active
        where (!entry.busy || besideAllowed && takesBeside(entry)) && entry.source.besideJob !== entry
            && !entry.waitOrder.isEmpty && entry !== excluded && (largeAllowed || !isLarge(entry)) && !skipped(entry)
        {
            if best == nil || entry.waitsBefore(best!) { best = entry }
        }
        return best
    }

    private func earliestPrefetch(now: Double, excluding excluded: ImageEntry?, largeAllowed: Bool = true)
        -> (ImageEntry, Int, deadline: Double)?
    {
        var best: (ImageEntry, Int, deadline: Double)? = nil
        for entry in active
        where !entry.busy && entry !== excluded && entry.window > 0 && !entry.prefetchStalled
            && isActive(entry, now: now) && (largeAllowed || !isLarge(entry))
        {
            guard let index = entry.nextRunStart else { continue }
            let deadline = entry.deadline(ofFrame: index)
            if best == nil || deadline < best!.deadline { best = (entry, index, deadline) }
        }
        return best
    }

    /// Decoding ahead may only displace what nobody is about to need: frames of idle images and
    /// behind playheads, and the checkpoints and canvases of decoders not in use.
    func roomForPrefetch(_ bytes: Int, for requester: ImageEntry, now: Double) -> Bool {
        wouldFindRoom(for: bytes, reach: .outsideWindows, protecting: requester, now: now)
    }
}
