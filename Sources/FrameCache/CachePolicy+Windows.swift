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
        /// The renditions that are no longer active: no window.
        var idle: [ImageEntry] = []
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
    func windowPlan(for state: CacheState, now: Double, cap: Int?) -> WindowPlan {
        var plan = WindowPlan()
        var nowActive: [ImageEntry] = []
        var onDemand: [ObjectIdentifier: Int] = [:]
        var renditions: [ObjectIdentifier: [ImageEntry]] = [:]
        var idlePosters = 0
        for entry in state.entries.values {
            if isActive(entry, in: state, now: now) {
                nowActive.append(entry)
                if entry.isSought {
                    onDemand[ObjectIdentifier(entry)] = 0
                } else if !entry.isExact {
                    renditions[ObjectIdentifier(entry.source), default: []].append(entry)
                }
            } else {
                plan.idle.append(entry)
                if entry.isExact { idlePosters += entry.frames.first??.count ?? 0 }
                if state.isForgettable(entry) { plan.forget.append(entry) }
            }
        }
        for group in renditions.values {
            let played = group.filter { $0.playheadMoves > 0 }.sorted { $1.usedBefore($0) }
            let decodedAhead = Set(played.prefix(decodeAheadRenditions).map(ObjectIdentifier.init))
            for entry in group where !decodedAhead.contains(ObjectIdentifier(entry)) {
                onDemand[ObjectIdentifier(entry)] =
                    entry.playheadMoves > 0 ? min(window.lookahead(of: demand(of: entry)), cap ?? .max) : 0
            }
        }
        let forgotten = Set(plan.forget.map(ObjectIdentifier.init))
        let windowed = nowActive.filter { onDemand[ObjectIdentifier($0)] == nil && !forgotten.contains(ObjectIdentifier($0)) }
        let largestCanvas = nowActive.filter { !isLarge($0, in: state) }.map(\.decodedFrameBytes).max() ?? 0
        plan.workingReserve = decodeThreads * tuning.workingCanvasesPerThread * largestCanvas
        let holdLimit = max(state.budget - plan.workingReserve, state.budget / 4)
        let canvases = decodeThreads * largestCanvas
        let windows = window.windows(for: windowed.map(demand(of:)), budget: holdLimit - canvases - idlePosters, cap: cap)
        for (entry, frames) in zip(windowed, windows) {
            plan.active.append((entry, .window(frames, whole: window.isWhole(frames, frameCount: entry.frameCount))))
        }
        for entry in nowActive {
            if let riding = onDemand[ObjectIdentifier(entry)] { plan.active.append((entry, .onDemand(riding: riding))) }
        }
        return plan
    }

    /// What the window policy needs to know of `entry`.
    func demand(of entry: ImageEntry) -> WindowPolicy.Demand {
        WindowPolicy.Demand(
            frameCount: entry.frameCount, decodedFrameBytes: entry.outputFrameBytes,
            encodedFrameBytes: entry.encodedFrameEstimate, loopMs: entry.loopMs, wasWhole: entry.isWhole)
    }
}
