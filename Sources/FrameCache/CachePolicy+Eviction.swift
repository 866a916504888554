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
        /// The decoder, and with it the image's file (``ImageSource/image``).
        case decoder(ImageEntry)
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
    /// `take` returns true (``EvictionWalk``, one step per kind of loss).
    private func walkCandidates(
        in state: CacheState, reach: EvictionReach, requester: ImageEntry?, keep: Int?, now: Double,
        _ take: (Candidate, Int) -> Bool
    ) {
        withoutActuallyEscaping(take) { take in
            var walk = EvictionWalk(state: state, requester: requester, keep: keep, take: take)
            guard walk.stagedFrames(), walk.idleImages(), walk.framesOutsideWindows(), walk.idleDecoders(),
                walk.resumeAnchors(), reach >= .inWindows, walk.framesInWindows(), reach >= .posters
            else { return }
            _ = walk.posters()
        }
    }
}
