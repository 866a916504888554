/// Rule 9: which images are active, and how many frames of each are kept and decoded ahead.
extension CachePolicy {
    /// How one active rendition is kept.
    enum Keeping: Equatable {
        /// Decoded ahead: a window of this many frames from its playhead (the whole animation
        /// when `whole`).
        case window(Int, whole: Bool)
        /// Made when asked for (``ImageEntry/onDemand``): no window; it takes the `riding` frames
        /// after its playhead from composites made for the image's other renditions.
        case onDemand(riding: Int)
    }

    /// The windows worked out: what ``CacheState/apply(_:now:)`` sets.
    struct WindowPlan {
        /// Every active rendition and how it is kept.
        var active: [(entry: ImageEntry, keeping: Keeping)] = []
        /// Idle renditions that hold nothing: forgotten.
        var forget: [ImageEntry] = []
        /// What the decode threads need while they work, set aside from the budget.
        var workingReserve = 0
    }

    /// Works out which images are active, the working reserve (for the largest active canvas that
    /// is not large), and every active image's window (``WindowPolicy``) within the hold limit
    /// less the canvases the decoders in use keep (one of the largest per thread) and less the
    /// posters of inactive images, capped at `cap` (pressure). Inactive images get no window. Of
    /// an image's active renditions other than the full-size PNG, only the
    /// ``decodeAheadRenditions`` most recently used among those being played get windows; the
    /// rest are made on demand, riding composites over their lookahead; a rendition only sought
    /// in is made on demand too (rule 3). Renditions that hold nothing and are inactive are
    /// forgotten (an active one may be the entry a request is about to wait on).
    ///
    /// Walks the images listed active (``CacheIndex/active``) and the idle ones that hold nothing,
    /// not every image held; a listed image whose active time passed gets no window here and is
    /// made idle by ``CacheState/expire(now:atMost:)``.
    func windowPlan(for state: CacheState, now: Double, cap: Int?) -> WindowPlan {
        var plan = WindowPlan()
        var nowActive: [ImageEntry] = []
        var onDemand: [ObjectIdentifier: Int] = [:]
        var renditions: [ObjectIdentifier: [ImageEntry]] = [:]
        let idlePosters = state.index.idlePosterBytes
        let listed = state.index.active.entries
        state.index.examined += listed.count
        for entry in listed where isActive(entry, in: state, now: now) {
            // One whose active time passed is left to ``CacheState/expire(now:atMost:)``.
            nowActive.append(entry)
            if entry.isSought {
                onDemand[ObjectIdentifier(entry)] = 0
            } else if !entry.isExact {
                renditions[ObjectIdentifier(entry.source), default: []].append(entry)
            }
        }
        state.index.examined += state.index.forgettable.count
        plan.forget += state.index.forgettable.entries.filter(state.isForgettable)
        for group in renditions.values {
            onDemand.merge(ridingOnDemand(among: group, cap: cap)) { $1 }
        }
        let windowed = nowActive.filter { onDemand[ObjectIdentifier($0)] == nil }
        let largestCanvas = nowActive.filter { !isLarge($0, in: state) }.map(\.decodedFrameBytes).max() ?? 0
        plan.workingReserve = decodeThreads * tuning.workingCanvasesPerThread * largestCanvas
        let holdLimit = max(state.budget - plan.workingReserve, state.budget / 4)
        let canvases = decodeThreads * largestCanvas
        // The entries' own cost is held whatever the windows are (``ImageEntry/overheadBytes``).
        let room = holdLimit - canvases - idlePosters - state.entries.overheadBytes
        let windows = window.windows(for: windowed.map(demand(of:)), budget: room, cap: cap)
        for (entry, frames) in zip(windowed, windows) {
            plan.active.append((entry, .window(frames, whole: window.isWhole(frames, frameCount: entry.frameCount))))
        }
        for entry in nowActive {
            if let riding = onDemand[ObjectIdentifier(entry)] { plan.active.append((entry, .onDemand(riding: riding))) }
        }
        return plan
    }

    /// Of one image's active renditions other than the full-size PNG (and not only sought in),
    /// those made on demand — all but the ``decodeAheadRenditions`` most recently used among
    /// those being played — with the frames each takes from composites made anyway: its
    /// lookahead if it is played (capped), none if not.
    private func ridingOnDemand(among group: [ImageEntry], cap: Int?) -> [ObjectIdentifier: Int] {
        let played = group.filter { $0.playheadMoves > 0 }.sorted { $1.usedBefore($0) }
        let decodedAhead = Set(played.prefix(decodeAheadRenditions).map(ObjectIdentifier.init))
        var riding: [ObjectIdentifier: Int] = [:]
        for entry in group where !decodedAhead.contains(ObjectIdentifier(entry)) {
            riding[ObjectIdentifier(entry)] =
                entry.playheadMoves > 0 ? min(window.lookahead(of: demand(of: entry)), cap ?? .max) : 0
        }
        return riding
    }

    /// How the renditions of `entry`'s image are kept once `entry` is active, worked out for that
    /// image alone — when an image becomes active, or one of its renditions is first played —
    /// so that it is decoded ahead at once without working out every active image's window
    /// (that waits for the next ``windowPlan(for:now:cap:)``, ``windowsDue(changes:active:since:)``).
    /// A rendition decoded ahead that had no window — or `entry` itself when it `newly` became
    /// active — gets its lookahead (capped at `cap`); one that had keeps it.
    func admission(
        of entry: ImageEntry, newly: Bool, in state: CacheState, cap: Int?
    ) -> [(entry: ImageEntry, keeping: Keeping)] {
        let siblings = entry.source.entries.filter { $0.isListedActive && state.entries[$0.id] === $0 }
        var riding = ridingOnDemand(among: siblings.filter { !$0.isSought && !$0.isExact }, cap: cap)
        for sought in siblings where sought.isSought { riding[ObjectIdentifier(sought)] = 0 }
        return siblings.map { sibling -> (entry: ImageEntry, keeping: Keeping) in
            if let frames = riding[ObjectIdentifier(sibling)] { return (sibling, Keeping.onDemand(riding: frames)) }
            if sibling.window > 0 && !sibling.onDemand && !(newly && sibling === entry) {
                return (sibling, Keeping.window(sibling.window, whole: sibling.isWhole))
            }
            let lookahead = min(window.lookahead(of: demand(of: sibling)), cap ?? .max)
            let frames = max(sibling.frameCount > 0 ? 1 : 0, min(lookahead, sibling.frameCount))
            return (sibling, Keeping.window(frames, whole: window.isWhole(frames, frameCount: sibling.frameCount)))
        }
    }

    /// Whether the windows are due to be worked out again for every active image, `changes`
    /// images having become active or idle (or been first played) of the `active` ones, `since`
    /// seconds after they last were: at once while few are active, and once one in
    /// ``Tuning/refreshWhenOneInChanged`` changed when many are (each image that changed got its
    /// window from ``admission(of:newly:in:cap:)`` meanwhile) — working them out walks every active
    /// image, so each change pays for a share of that walk; and every
    /// ``Tuning/windowRefreshSeconds``, or every ``Tuning/windowRefreshSecondsPerActiveImage``
    /// per active image when that is longer, as frame sizes become known and pressure caps lift.
    func windowsDue(changes: Int, active: Int, since: Double) -> Bool {
        (changes > 0 && changes >= active / tuning.refreshWhenOneInChanged)
            || since >= max(tuning.windowRefreshSeconds, Double(active) * tuning.windowRefreshSecondsPerActiveImage)
    }

    /// The working reserve `entry` needs if it is the largest canvas active (not large).
    func workingReserve(for entry: ImageEntry, in state: CacheState) -> Int {
        isLarge(entry, in: state) ? 0 : decodeThreads * tuning.workingCanvasesPerThread * entry.decodedFrameBytes
    }

    /// What the window policy needs to know of `entry`.
    func demand(of entry: ImageEntry) -> WindowPolicy.Demand {
        WindowPolicy.Demand(
            frameCount: entry.frameCount, decodedFrameBytes: entry.outputFrameBytes,
            encodedFrameBytes: entry.encodedFrameEstimate, loopMs: entry.loopMs, wasWhole: entry.isWhole)
    }
}
