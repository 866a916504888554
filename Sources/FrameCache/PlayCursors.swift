/// Where the clients of one rendition are in its animation: a few cursors, each the last frame
/// one of them asked for, so that a request can be told apart as playing on (the next frame or
/// the one after, from a cursor), overtaken (a little before one: a player fetches a few frames
/// at once), or a seek (anywhere else).
///
/// A rendition has one playhead (its window, decode-ahead and eviction order start there), but
/// may have several clients: two viewers of one image at different points, or a player and a
/// client asking for frames all over it — widths above the canvas all land on the full-size
/// rendition. Judged against the playhead alone, each viewer's request would look like a seek
/// from the other's place; judged against the cursors, each viewer plays on from its own, and
/// only requests that follow none of them are seeks. Seeks do not move the playhead
/// (``ImageEntry/movePlayhead(to:)``), so a client asking for frames all over a rendition does
/// not drag its decode-ahead and eviction order about, nor make it count as played. A cursor is
/// a player's once it has moved on twice: a seek that lands just after an earlier one by chance
/// moves it once, a player moves on with every frame.
///
/// The reaches are kept short on purpose: with 8 cursors reaching 8 frames either way, the
/// cursors covered most of a 100-frame animation, and the benchmark's abuser (frame 37·i mod
/// 100 in size after size) looked like several players (simulated: 3,160 of 7,600 of its
/// full-size requests moved a player's cursor on; with these reaches none does). A client
/// asking for frames at random still lands just after an earlier request now and then, and
/// can pass for a player after a while: then it is treated as one (as every client was
/// before cursors).
struct PlayCursors: Sendable {
    /// How far forward (frames, wrapping) a request may land from a cursor and play on from it:
    /// the next frame, or the one after when two requests of a player crossed.
    static let playOnReach = 2
    /// How far back a request may land from a cursor and be one another overtook (a player
    /// has up to 4 fetches in flight).
    static let overtakenReach = 4
    /// Cursors kept. When they are all taken, a seek replaces the least recently used of those
    /// that are not a player's, so a client seeking all over cannot push a player's cursor out;
    /// only when every cursor is a player's does it replace the least recently used.
    static let capacity = Storage.count

    /// What a request was, seen from the cursors.
    enum Move: Equatable, Sendable {
        /// A frame a cursor is at, or one a little before a cursor (an overtaken request).
        case stay
        /// A frame a little after a cursor that had not moved on before: it moves on to it (a
        /// player's second frame, or a seek near an earlier one).
        case step
        /// A frame a little after a cursor that had moved on before (a player's): it moves on.
        case playOn
        /// Any other frame: a new cursor starts there.
        case seek
        /// The first request, with no cursor yet (a rendition whose frames an upload left in the
        /// cache, nobody having asked): a cursor starts there; not a seek.
        case first

        /// The cursor moved (``step`` or ``playOn``).
        var movesOn: Bool { self == .step || self == .playOn }
        /// The playhead goes to the frame asked for: the cursor moved on, or it is the first.
        var movesPlayhead: Bool { movesOn || self == .first }
    }

    /// One client's place: the frame it last asked for, when (a tick) and how many times it
    /// moved on (a player's from 2).
    private struct Cursor {
        var frame: Int
        var use: UInt64
        var steps = 0
        var isPlayers: Bool { steps >= 2 }
    }

    /// The cursors in use are the first `count`: kept in place, in the value itself (no array
    /// to check for uniqueness or grow on the hit path, which comes here on every request).
    private typealias Storage = InlineArray<4, Cursor>
    private var cursors = Storage(repeating: Cursor(frame: 0, use: 0))
    private var count = 0
    private var tick: UInt64 = 0

    /// One cursor, at `frame` (the first frame asked for), or none yet.
    init(at frame: Int?) {
        if let frame {
            cursors[0] = Cursor(frame: frame, use: 0)
            count = 1
        }
    }

    /// The frames the cursors are at, in no particular order.
    var positions: [Int] { (0..<count).map { cursors[$0].frame } }

    /// Classifies a request for frame `index` of an animation of `frameCount` frames and moves
    /// the cursors accordingly. Every hit comes here (``ImageEntry/notePlaying(_:)``): the cursors
    /// are walked in place, and the forward distances found without dividing when both frames
    /// are in the animation, as they are for every request.
    mutating func note(_ index: Int, frameCount: Int) -> Move {
        let n = max(1, frameCount)
        tick &+= 1
        let tick = self.tick
        // The nearest cursor at or before `index` (forward distance), and whether one is a
        // little after it.
        var nearest = -1
        var nearestForward = Int.max
        var overtaken = -1
        for c in 0..<count {
            let forward = Self.forward(index, from: cursors[c].frame, frameCount: n)
            if forward == 0 {
                cursors[c].use = tick
                return .stay
            }
            if forward <= Self.playOnReach, forward < nearestForward { (nearest, nearestForward) = (c, forward) }
            if n - forward <= Self.overtakenReach { overtaken = c }
        }
        if nearest >= 0 {
            cursors[nearest].frame = index
            cursors[nearest].use = tick
            cursors[nearest].steps = min(cursors[nearest].steps + 1, 2)
            return cursors[nearest].isPlayers ? .playOn : .step
        }
        if overtaken >= 0 {
            cursors[overtaken].use = tick
            return .stay
        }
        let cursor = Cursor(frame: index, use: tick)
        if count == 0 {
            (cursors[0], count) = (cursor, 1)
            return .first
        }
        if count < Self.capacity {
            cursors[count] = cursor
            count += 1
        } else {
            var victim = 0
            for c in 1..<count {
                let (x, y) = (cursors[c], cursors[victim])
                if x.isPlayers != y.isPlayers ? !x.isPlayers : x.use < y.use { victim = c }
            }
            cursors[victim] = cursor
        }
        return .seek
    }

    /// How far forward (wrapping) frame `index` is from frame `frame` in an animation of `n`
    /// frames: `((index - frame) % n + n) % n`, without dividing when the difference is within
    /// one lap either way (both frames in the animation).
    @inline(__always)
    static func forward(_ index: Int, from frame: Int, frameCount n: Int) -> Int {
        let difference = index - frame
        if difference >= 0 && difference < n { return difference }
        if difference < 0 && difference >= -n { return difference + n }
        return (difference % n + n) % n
    }
}
