/// Where the clients of one rendition are in its animation: a few cursors, each the last frame
/// one of them asked for, so that a request can be told apart as playing on (a frame a little
/// after a cursor), overtaken (a little before one: a player fetches a few frames at once), or
/// a seek (anywhere else).
///
/// A rendition has one playhead (its window, decode-ahead and eviction order start there), but
/// may have several clients: two viewers of one image at different points, or a player and a
/// client asking for frames all over it — widths above the canvas all land on the full-size
/// rendition. Judged against the playhead alone, each viewer's request would look like a seek
/// from the other's place; judged against the cursors, each viewer plays on from its own, and
/// only requests that follow none of them are seeks. Seeks do not move the playhead
/// (``ImageEntry/movePlayhead(to:)``), so a client asking for frames all over a rendition does
/// not drag its decode-ahead and eviction order about, nor make it count as played.
struct PlayCursors: Sendable {
    /// How far forward (frames, wrapping) a request may land from a cursor and still play on
    /// from it — a player that fell behind and skips a few — and how far back it may land and
    /// be a request another overtook.
    static let reach = 8
    /// Cursors kept. When they are all taken, a seek replaces the least recently used of those
    /// that never played on, so a client seeking all over cannot push a player's cursor out;
    /// only when every cursor has played on does it replace the least recently used.
    static let capacity = 8

    /// What a request was, seen from the cursors.
    enum Move: Equatable, Sendable {
        /// A frame a cursor is at, or one a little before a cursor (an overtaken request).
        case stay
        /// A frame a little after a cursor: that cursor moved on to it.
        case playOn
        /// Any other frame: a new cursor starts there.
        case seek
    }

    private var frames: [Int]
    private var uses: [UInt64]
    private var playedOn: [Bool]
    private var tick: UInt64 = 0

    /// One cursor, at `frame` (the first frame asked for).
    init(at frame: Int) {
        frames = [frame]
        uses = [0]
        playedOn = [false]
    }

    /// The frames the cursors are at, in no particular order.
    var positions: [Int] { frames }

    /// Classifies a request for frame `index` of an animation of `frameCount` frames and moves
    /// the cursors accordingly.
    mutating func note(_ index: Int, frameCount: Int) -> Move {
        let n = max(1, frameCount)
        tick &+= 1
        // The nearest cursor at or before `index` (forward distance), and whether one is a
        // little after it.
        var nearest: (cursor: Int, forward: Int)? = nil
        var overtaken: Int? = nil
        for (c, frame) in frames.enumerated() {
            let forward = ((index - frame) % n + n) % n
            if forward == 0 {
                uses[c] = tick
                return .stay
            }
            if forward <= Self.reach, forward < (nearest?.forward ?? .max) { nearest = (c, forward) }
            if n - forward <= Self.reach { overtaken = c }
        }
        if let (c, _) = nearest {
            frames[c] = index
            uses[c] = tick
            playedOn[c] = true
            return .playOn
        }
        if let c = overtaken {
            uses[c] = tick
            return .stay
        }
        if frames.count < Self.capacity {
            frames.append(index)
            uses.append(tick)
            playedOn.append(false)
        } else {
            let victim = uses.indices.min { a, b in
                playedOn[a] != playedOn[b] ? !playedOn[a] : uses[a] < uses[b]
            }!
            (frames[victim], uses[victim], playedOn[victim]) = (index, tick, false)
        }
        return .seek
    }
}
