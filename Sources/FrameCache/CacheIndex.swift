/// The orders ``CachePolicy`` reads instead of walking every entry the cache holds: which images
/// are active, which have requests waiting or frames to decode ahead, which idle ones go first when
/// room is needed, whose posters go last. Each decision then costs O(log n), or the entries that
/// have work (waiting, decode-ahead, the active images' windows) — not the images cached.
///
/// Kept current as entries change (``reindex(_:)``): an entry's changes under the cache's lock
/// place it again — its frames stored and dropped, requests waiting and answered, its window, its
/// use (``ImageEntry/lastUse``, set with every request that takes the lock). What a hit changes
/// without the lock (the playhead, ``ImageEntry/lastRequest``) only touches active entries: their
/// orders read those live where it matters (deadlines, the waiting order), and a hit that needs a
/// decision (decode-ahead running low, an idle image asked for again) takes the lock
/// (``FrameCache/cachedFrame(id:index:reader:)``) and places the entry again there. Keys are
/// snapshots: an active entry's last use may be later than its key says, never earlier, which is
/// what ``CacheState/expire(now:atMost:)`` relies on.
///
/// A class: entries place themselves in it when they change; it belongs to one ``CacheState``
/// (a copy of the state shares it, and is for reading).
final class CacheIndex {
    /// When an entry was last used — ``ImageEntry/usedBefore(_:)``'s order.
    struct UseKey: Comparable {
        var lastRequest: Double
        var lastUse: UInt64

        init(_ entry: ImageEntry) {
            lastRequest = entry.lastRequest
            lastUse = entry.lastUse
        }

        static func < (a: UseKey, b: UseKey) -> Bool {
            a.lastRequest != b.lastRequest ? a.lastRequest < b.lastRequest : a.lastUse < b.lastUse
        }
    }

    /// When the next frame an entry decodes ahead is due: ``ImageEntry/deadline(ofFrame:)``,
    /// placed when the entry last changed under the lock. A hit may have moved its playhead since;
    /// when that leaves it a frame to make, the hit takes the lock and places it again, and
    /// otherwise only its last request moved on — so a deadline is never earlier than its key,
    /// which is what a walk in this order relies on to stop early.
    struct DueKey: Comparable {
        var deadline: Double
        var lastUse: UInt64

        static func < (a: DueKey, b: DueKey) -> Bool {
            a.deadline != b.deadline ? a.deadline < b.deadline : a.lastUse < b.lastUse
        }
    }

    /// The order idle entries give things up in — ``ImageEntry/givenUpBefore(_:)``'s: never
    /// played before played, then least recently used.
    struct IdleKey: Comparable {
        var played: Bool
        var use: UseKey

        init(_ entry: ImageEntry) {
            played = entry.isPlayed
            use = UseKey(entry)
        }

        static func < (a: IdleKey, b: IdleKey) -> Bool {
            a.played != b.played ? !a.played : a.use < b.use
        }
    }

    /// Entries the cache took in and has not yet found active or idle (``CacheState/classify(now:)``):
    /// a new entry is active at once when asked for (``CacheState/admit(_:)``), one an upload
    /// left is idle.
    private(set) var unclassified = EntrySet(.unclassified)
    /// Listed active (``ImageEntry/isListedActive``): the images with windows.
    private(set) var active = EntrySet(.active)
    /// The active entries by last use: when each may expire, and the least recently used first.
    private(set) var byUse = EntryHeap<UseKey>(.byUse)
    /// Entries with requests waiting, those of players (``ImageEntry/waitsAsPlayer``) apart
    /// from the others, each in the order they began to wait: rule 1's order.
    private(set) var waitingPlayers = EntryHeap<UInt64>(.waitingPlayers)
    private(set) var waitingOthers = EntryHeap<UInt64>(.waitingOthers)
    /// Active entries due a run of decode-ahead (``ImageEntry/nextRunStart``), by when a
    /// real-time player will ask for that frame (``DueKey``): rule 6's order.
    private(set) var decodeAhead = EntryHeap<DueKey>(.decodeAhead)
    /// Active renditions made on demand.
    private(set) var onDemand = EntrySet(.onDemand)
    /// Active entries decoded ahead with a window shorter than the animation: the only ones that
    /// can hold frames outside their window, and resume anchors.
    private(set) var partial = EntrySet(.partial)
    /// Active entries (not made on demand) holding a frame besides their poster, least recently
    /// used first: what rule 8's fifth step (frames inside windows) takes from. Those whose windows
    /// were emptied already are not in it, so a walk does not pass them again at every eviction.
    private(set) var holders = EntryHeap<UseKey>(.holders)
    /// Active entries decoded ahead whose image holds a decoder, least recently used first: the
    /// decoders not in use that eviction may take.
    private(set) var decoders = EntryHeap<UseKey>(.decoders)
    /// Idle entries that hold something to give up besides a pinned poster, in the order they
    /// give it up.
    private(set) var idle = EntryHeap<IdleKey>(.idle)
    /// Entries holding a poster (frame 0), least recently used first.
    private(set) var posters = EntryHeap<UseKey>(.posters)
    /// Idle entries that hold no frame and nobody waits for: forgotten when their image holds no
    /// decoder either (``CacheState/isForgettable(_:)``).
    private(set) var forgettable = EntrySet(.forgettable)
    /// The posters of idle full-size entries, in bytes: kept through everything, so set aside from
    /// the windows.
    private(set) var idlePosterBytes = 0
    /// Entries looked at by the orders' walks so far (tests read it to tell a decision that walks
    /// the entries with work from one that walks every entry).
    var examined = 0

    /// Places `entry` in every order it belongs to now, and out of the others.
    func reindex(_ entry: ImageEntry) {
        guard entry.index === self else { return }
        let listed = entry.isListedActive
        // Until it is found active or idle, an entry is neither (it may be about to wait).
        let known = listed || !unclassified.contains(entry)
        active.set(entry, member: listed)
        if listed { byUse.update(entry, UseKey(entry)) } else { byUse.remove(entry) }
        if listed && entry.window > 0 && !entry.prefetchStalled, let next = entry.nextRunStart {
            decodeAhead.update(entry, DueKey(deadline: entry.deadline(ofFrame: next), lastUse: entry.lastUse))
        } else {
            decodeAhead.remove(entry)
        }
        onDemand.set(entry, member: listed && entry.onDemand)
        partial.set(entry, member: listed && !entry.onDemand && entry.window > 0 && entry.window < entry.frameCount)
        let posterHeld = entry.frames.first ?? nil != nil
        if listed && !entry.onDemand && entry.cachedCount > (posterHeld ? 1 : 0) {
            holders.update(entry, UseKey(entry))
        } else {
            holders.remove(entry)
        }
        if listed && !entry.onDemand && entry.renderer != nil {
            decoders.update(entry, UseKey(entry))
        } else {
            decoders.remove(entry)
        }
        let waits = !entry.waitOrder.isEmpty
        let player = waits && entry.waitsAsPlayer
        if player { waitingPlayers.update(entry, entry.waitingSince) } else { waitingPlayers.remove(entry) }
        if waits && !player { waitingOthers.update(entry, entry.waitingSince) } else { waitingOthers.remove(entry) }
        if !listed && known && givesSomethingUp(entry) { idle.update(entry, IdleKey(entry)) } else { idle.remove(entry) }
        if entry.frames.first ?? nil != nil { posters.update(entry, UseKey(entry)) } else { posters.remove(entry) }
        forgettable.set(entry, member: !listed && known && entry.cachedCount == 0 && entry.waitOrder.isEmpty)
        let poster = !listed && known && entry.isExact ? (entry.frames.first??.count ?? 0) : 0
        idlePosterBytes += poster - entry.countedPosterBytes
        entry.countedPosterBytes = poster
    }

    /// Every entry with requests waiting.
    var waiting: [ImageEntry] {
        var all: [ImageEntry] = []
        waitingPlayers.forEachInOrder { _, entry in
            all.append(entry)
            return true
        }
        waitingOthers.forEachInOrder { _, entry in
            all.append(entry)
            return true
        }
        return all
    }

    /// Takes `entry` in: unclassified until found active or idle.
    func insert(_ entry: ImageEntry) {
        entry.index = self
        unclassified.insert(entry)
        reindex(entry)
    }

    /// `entry` was found active or idle.
    func classified(_ entry: ImageEntry) {
        guard unclassified.contains(entry) else { return }
        unclassified.remove(entry)
        reindex(entry)
    }

    /// Takes `entry` out of every order (it left the cache).
    func remove(_ entry: ImageEntry) {
        guard entry.index === self else { return }
        unclassified.remove(entry)
        active.remove(entry)
        byUse.remove(entry)
        waitingPlayers.remove(entry)
        waitingOthers.remove(entry)
        decodeAhead.remove(entry)
        onDemand.remove(entry)
        partial.remove(entry)
        holders.remove(entry)
        decoders.remove(entry)
        idle.remove(entry)
        posters.remove(entry)
        forgettable.remove(entry)
        idlePosterBytes -= entry.countedPosterBytes
        entry.countedPosterBytes = 0
        entry.index = nil
    }

    /// An idle entry has something to give up: frames beyond a pinned poster, or its image's
    /// decoder.
    private func givesSomethingUp(_ entry: ImageEntry) -> Bool {
        let pinned = entry.pinsPoster ? (entry.frames.first??.count ?? 0) : 0
        return entry.frameBytes > pinned || entry.renderer != nil || entry.rendererBytes > 0
    }

    /// Places an active entry that requests waiting keep active past its time as if used at
    /// `now` less `activeSeconds` plus `recheck` seconds: looked at again for expiry then, not
    /// at every decision meanwhile.
    func deferExpiry(of entry: ImageEntry, now: Double, activeSeconds: Double, recheck: Double) {
        var key = UseKey(entry)
        key.lastRequest = now - activeSeconds + recheck
        byUse.update(entry, key)
    }

}

/// The cache's entries by key (``CacheableImage/key``), with the orders they are placed in
/// (``CacheIndex``): an entry set here is placed, one taken out leaves every order.
struct EntryTable {
    let index: CacheIndex
    private var byKey: [String: ImageEntry] = [:]
    /// What the entries held cost besides their frames and decoders (``ImageEntry/overheadBytes``,
    /// as each was counted when it came in): part of the cache's held bytes.
    private(set) var overheadBytes = 0

    init(index: CacheIndex) { self.index = index }

    subscript(key: String) -> ImageEntry? {
        get { byKey[key] }
        set {
            let old = byKey[key]
            if let old, old !== newValue {
                index.remove(old)
                overheadBytes -= old.countedOverheadBytes
            }
            byKey[key] = newValue
            if let entry = newValue, entry !== old {
                entry.countedOverheadBytes = entry.overheadBytes
                overheadBytes += entry.countedOverheadBytes
                if entry.index !== index { index.insert(entry) }
            }
        }
    }

    /// Every entry, in no particular order (a walk over all of them: listings and purges).
    var values: Dictionary<String, ImageEntry>.Values { byKey.values }
    var count: Int { byKey.count }
    var isEmpty: Bool { byKey.isEmpty }
}
