import AnimatedImage

/// The frame cache's scheduling policy: what a decode thread makes next, what goes when room is
/// needed, who waits, and how many frames of each image are kept and decoded ahead. A pure value:
/// every decision is a function of the cache's state (``CacheState``) and the time passed in, and
/// returns a decision (a ``Job``, an ``Eviction``, a ``WindowPlan``) that the mechanism carries
/// out — ``FrameCache`` and its decode threads, under the cache's lock. No locks, no threads and
/// no clock reads here.
///
/// The rules (each has a row in `CachePolicyScenarioTests` that fails without it):
///
/// 1. **Waiting requests first, players first.** A free decode thread takes a waiting request
///    before any decode-ahead: a player's — a client that moved on in the rendition, asking for a
///    frame that is not a seek (``ImageEntry/waitsAsPlayer``) — before a one-off, then the one that
///    has waited longest.
/// 2. **One-offs and their patience.** A one-off (a rendition asked for a frame and not followed,
///    or a seek) waiting on an image whose players moved on within
///    ``Tuning/playersPresentSeconds`` waits up to ``Tuning/oneOffPatienceSeconds`` even with a
///    thread free, so their next requests find the image's decoder free — and up to
///    ``Tuning/oneOffPatienceWhileShortSeconds`` while one of them is short of frames, so that the
///    start of playback has every core — except a request for frame 0 (a new viewer's first). A
///    thread holding the image makes a player's frame due within ``Tuning/runMarginSeconds``
///    before a one-off still within its patience.
/// 3. **Seeks.** A request far from every client of a rendition (``PlayCursors``) leaves its
///    playhead and waits as a one-off; a rendition only sought in, never played, is made on demand.
/// 4. **Beside the decoder.** A one-off waiting on an image whose decoder a thread holds, while
///    one of the image's players has fewer than ``Tuning/playerReadyFrames`` frames ready, is made
///    beside it on a decoder of its own — not frame 0, not a player's request, not a large image,
///    one at a time per image.
/// 5. **Runs.** After a frame, the thread that holds an image goes on with it: requests waiting
///    on its renditions first, then its next frame ahead, for up to ``Tuning/maxRun`` frames in a
///    row (a run reuses the canvas), stopping sooner when another image's frame is due within
///    ``Tuning/runMarginSeconds`` or requests wait on other images — except for the
///    ``Tuning/aheadOfWaiter`` frames after one someone waited for.
/// 6. **Decode-ahead.** Earliest deadline first — the frame a real-time player will ask for
///    soonest — started when the frames ready ahead of a playhead run down to half its window,
///    and only into room found without evicting what someone is about to need (rule 8 up to
///    ``EvictionReach/outsideWindows``). Large images (a canvas over a quarter of the budget) use
///    every decode thread but one.
/// 7. **Pressure.** A warning keeps the frame at each playhead and the posters; critical keeps
///    the posters only and drops decoders, and eviction may reach posters while it lasts. Windows
///    are capped as ``PressureController`` says, and after a purge only images asked for again
///    are active.
/// 8. **Eviction order**, cheapest loss first: staged frames of uploads; idle images and
///    renditions made on demand (never played before played, least recently used first, the
///    frame needed again last first, posters pinned); frames outside active windows (least
///    recently used image first, the resume anchor kept); checkpoints, then canvases, of decoders
///    not in use; resume anchors; with a waiting request, frames inside other images' windows,
///    farthest ahead first; posters last.
/// 9. **Windows.** An image is active when asked for within ``activeSeconds`` since the last
///    purge, or waited for; active images share the hold limit (the budget less the working
///    reserve of ``Tuning/workingCanvasesPerThread`` canvases per decode thread) by
///    ``WindowPolicy``; of an image's renditions other than the full-size one, the
///    ``decodeAheadRenditions`` most recently played get windows, the others are made on demand
///    and take the frames their lookahead covers from composites made anyway. Windows are worked
///    out again every ``Tuning/windowRefreshSeconds`` (longer with thousands active) and when the
///    active images change (with many active, once one in ``Tuning/refreshWhenOneInChanged``
///    changed); an image that becomes active meanwhile is decoded ahead at once, over its
///    lookahead.
struct CachePolicy: Sendable {
    /// The constants the rules were tuned with, in one place.
    struct Tuning: Sendable, Equatable {
        /// Rule 5: frames of one image a decode thread makes in a row at most (restoring a
        /// canvas costs about a frame, so runs make that cost small).
        var maxRun = 8
        /// Rules 2 and 5: a run stops when another image's frame is due within this many
        /// seconds, and a player's frame due this soon goes before a one-off still within its
        /// patience.
        var runMarginSeconds = 0.15
        /// Rule 5: after a frame someone waited for, this many of the frames after it are made in
        /// the same run even while requests wait on other images: that client asks for the next
        /// one within a frame's delay, and a server that only ever answered waiting requests
        /// would leave every client waiting.
        var aheadOfWaiter = 2
        /// Rule 2: how long a one-off waits for players' frames due soon (measured: a client
        /// asking for size after size gets a frame about every 0.1 s instead of one for every two
        /// of the players', and a new player's first frame is not starved; BENCHMARKS.md,
        /// "Renditions: real time").
        var oneOffPatienceSeconds = 0.1
        /// Rule 2: how long at most a one-off waits while one of its image's players is short of
        /// frames (``playerReadyFrames``): at the start of playback every rendition's frames are
        /// made for the first time and the players need every core; a one-off made then — on the
        /// decoder or beside it — took a third of them (BENCHMARKS.md, "Renditions: abuse").
        var oneOffPatienceWhileShortSeconds = 0.5
        /// Rule 2: how recently a client must have moved on in one of an image's renditions for
        /// one-offs of that image to be held back (players ask every frame's delay).
        var playersPresentSeconds = 0.5
        /// Rule 4: frames ready from a player's playhead below which it is short of frames.
        var playerReadyFrames = 3
        /// Rule 9: canvases' worth of memory one decode thread uses besides what the cache holds
        /// (the frame being decoded, the encode's filtered rows and compressed stream, palette
        /// indices, the PNG being copied out, allocator slack). Measured in bench-playback (2
        /// threads, canvases up to 640×360): at its peaks the heap stood ≈ 3.7 canvases per
        /// thread above the cache's own count; with 3 the peak RSS touched the goal's limit.
        var workingCanvasesPerThread = 4
        /// Rule 9: windows are worked out again at least this often (seconds), as estimates of
        /// frame sizes firm up and images come and go…
        var windowRefreshSeconds = 0.25
        /// …or, with more than 5,000 images active, this long per active image (working them out
        /// walks every active image: about 1 µs each, so this keeps it near 2% of a core).
        var windowRefreshSecondsPerActiveImage = 50e-6
        /// Rule 9: images whose active time passed are made idle by the decode threads, this many
        /// at most as a thread takes a job, and this many at a time while it has none (when
        /// many expire at once, no request or job pays for all of them).
        var expiriesPerJob = 4
        var expiriesWhenIdle = 64
        /// Rule 9: windows are worked out again for every active image once one in this many of
        /// them became active or idle since (at once while fewer are active); each image that
        /// became active meanwhile is decoded ahead over its lookahead.
        var refreshWhenOneInChanged = 8

        init() {}
    }

    var tuning = Tuning()
    /// Rule 9: how each active image's window is sized.
    var window: WindowPolicy
    /// Rule 9: an image is active this long after its last request.
    var activeSeconds: Double
    /// Decode threads: the working reserve is per thread; large jobs leave one of them free.
    var decodeThreads: Int
    /// Rule 9: renditions of one image other than the full-size PNG that are decoded ahead at once.
    var decodeAheadRenditions: Int

    init(
        window: WindowPolicy = WindowPolicy(), activeSeconds: Double = 30, decodeThreads: Int = 1,
        decodeAheadRenditions: Int = 4
    ) {
        self.window = window
        self.activeSeconds = activeSeconds
        self.decodeThreads = max(1, decodeThreads)
        self.decodeAheadRenditions = max(0, decodeAheadRenditions)
    }

    /// The policy of a cache with `configuration`.
    init(_ configuration: FrameCacheConfiguration) {
        self.init(
            window: configuration.window, activeSeconds: configuration.activeImageSeconds,
            decodeThreads: configuration.decodeThreads, decodeAheadRenditions: configuration.decodeAheadRenditions)
    }

    // MARK: Who is who

    /// Rule 9: an image is active — it has a window and is decoded ahead — when it was asked for
    /// within ``activeSeconds`` and since the last purge, or has requests waiting. After a purge
    /// only images asked for again are decoded again: what nobody watches stays purged.
    func isActive(_ entry: ImageEntry, in state: CacheState, now: Double) -> Bool {
        (state.askedForSincePurge(entry) && now - entry.lastRequest <= activeSeconds) || !entry.waitOrder.isEmpty
    }

    /// One of the cache's renditions that a client moved on in (``ImageEntry/movedOn``): the
    /// players rules 2 and 4 look for.
    func isPlayer(_ entry: ImageEntry, in state: CacheState) -> Bool {
        entry.movedOn && state.entries[entry.id] === entry
    }

    /// Rule 6: a large job — its image's canvas is more than the cache plans for
    /// (``CacheState/largestPlannedCanvas``, a quarter of the budget; a 49 MP frame takes seconds
    /// to decode). Large jobs run on all decode threads but one, so the other images' jobs never
    /// queue behind them.
    func isLarge(_ entry: ImageEntry, in state: CacheState) -> Bool {
        entry.decodedFrameBytes > state.largestPlannedCanvas
    }

    /// Rule 2: whether a one-off request waiting on `entry` (for a rendition nobody plays, or a
    /// seek) waits out its patience even with a decode thread free: while players of the same
    /// image are about. Their next requests then find the image's decoder free instead of behind
    /// a replay to some far frame. A request for frame 0 is not held back: a new viewer starts
    /// there (its first request looks like a one-off), and the first frame costs one frame
    /// decode, no replay.
    func holdsBack(_ entry: ImageEntry, in state: CacheState, now: Double) -> Bool {
        guard !entry.waitsAsPlayer, entry.nextWaitingFrame != 0, withinPatience(entry, in: state, now: now) else {
            return false
        }
        return entry.source.entries.contains {
            isPlayer($0, in: state) && now - $0.lastRequest < tuning.playersPresentSeconds
        }
    }

    /// Rule 2: whether a one-off waiting on `entry` has waited less than its patience
    /// (``Tuning/oneOffPatienceSeconds``), or less than ``Tuning/oneOffPatienceWhileShortSeconds``
    /// while one of the image's players is short of frames. A patience of 0 turns both off.
    func withinPatience(_ entry: ImageEntry, in state: CacheState, now: Double) -> Bool {
        guard tuning.oneOffPatienceSeconds > 0 else { return false }
        let waited = now - entry.waitingSinceSeconds
        if waited < tuning.oneOffPatienceSeconds { return true }
        guard waited < tuning.oneOffPatienceWhileShortSeconds else { return false }
        return entry.source.entries.contains { isShortOfFrames($0, in: state) }
    }

    /// Rules 2 and 4: `entry` is a player with fewer than ``Tuning/playerReadyFrames`` frames
    /// ready from its playhead.
    func isShortOfFrames(_ entry: ImageEntry, in state: CacheState) -> Bool {
        let ready = tuning.playerReadyFrames
        return isPlayer(entry, in: state) && entry.window > 0 && entry.framesReady(upTo: ready) < ready
    }

    /// Rule 4: whether a waiting request on `entry`, whose image's decoder a thread holds, may be
    /// made beside it on a decoder of its own: a one-off request (not a player's: players share
    /// the image's decoder, its canvas in playback order and its checkpoints; not for frame 0,
    /// which a new viewer asks first), on an image that is not large, when no other request of
    /// the image is being made beside, while one of the image's players is short of frames. The
    /// players' run then goes on: at the start of playback, when every frame of every rendition
    /// is being made for the first time, a one-off that waited for the decoder and then replayed
    /// to a far frame held all of them up (BENCHMARKS.md, "Renditions: abuse"). The decoder beside keeps nothing (no checkpoints; dropped after the job). (A
    /// thread of its own for these, at the lowest priority, was tried: preempted while it held
    /// the cache's lock, it stalled every request for up to 0.3 s.)
    func takesBeside(_ entry: ImageEntry, in state: CacheState) -> Bool {
        entry.busy && entry.source.besideJob == nil && !entry.waitsAsPlayer && !isLarge(entry, in: state)
            && entry.nextWaitingFrame != 0 && entry.source.entries.contains { isShortOfFrames($0, in: state) }
    }
}
