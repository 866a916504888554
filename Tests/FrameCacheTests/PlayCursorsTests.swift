import FlipbookTestSupport
import Testing

@testable import FrameCache

/// Telling a request that plays on from one that overtook another or seeks, with several clients
/// in one rendition (``PlayCursors``), as a table: requests in order, the moves they are.
@Suite("Play cursors")
struct PlayCursorsTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let frameCount: Int
        let start: Int?
        let requests: [Int]
        let moves: [PlayCursors.Move]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "playing in order", frameCount: 100, start: 0, requests: [1, 2, 3], moves: [.step, .playOn, .playOn]),
        Case(name: "the same frame again", frameCount: 100, start: 5, requests: [5, 5], moves: [.stay, .stay]),
        Case(
            name: "the frame after next, and no farther", frameCount: 100, start: 0, requests: [2, 4, 7],
            moves: [.step, .playOn, .seek]),
        Case(
            name: "overtaken requests", frameCount: 100, start: 0, requests: [2, 1, 3, 4, 0],
            moves: [.step, .stay, .playOn, .playOn, .stay]),
        Case(name: "wrapping at the end", frameCount: 10, start: 8, requests: [9, 1, 2], moves: [.step, .playOn, .playOn]),
        Case(
            name: "two viewers 50 frames apart", frameCount: 100, start: 0, requests: [50, 1, 51, 2, 52, 3],
            moves: [.seek, .step, .step, .playOn, .playOn, .playOn]),
        Case(
            name: "a client seeking all over", frameCount: 100, start: 0, requests: [37, 74, 11, 48, 85, 22],
            moves: [.seek, .seek, .seek, .seek, .seek, .seek]),
        Case(
            name: "a seek, then playing on from there", frameCount: 100, start: 10, requests: [60, 61, 62],
            moves: [.seek, .step, .playOn]),
        Case(name: "a still image", frameCount: 1, start: 0, requests: [0, 0], moves: [.stay, .stay]),
        Case(
            name: "frames an upload left, then a first reader", frameCount: 100, start: nil, requests: [0, 1, 2, 60],
            moves: [.first, .step, .playOn, .seek]),
    ]

    @Test(arguments: cases) func movesAreToldApart(_ c: Case) {
        var cursors = PlayCursors(at: c.start)
        let moves = c.requests.map { cursors.note($0, frameCount: c.frameCount) }
        #expect(moves == c.moves)
    }

    @Test func forwardDistancesAreTheModularOnes() {
        // In the animation (the short cut without dividing) and outside it (the general formula).
        for n in [1, 2, 3, 7, 100] {
            for index in -2 * n...2 * n {
                for frame in -2 * n...2 * n {
                    #expect(
                        PlayCursors.forward(index, from: frame, frameCount: n) == ((index - frame) % n + n) % n,
                        "index \(index), frame \(frame), \(n) frames")
                }
            }
        }
    }

    @Test func theBenchmarksAbuserNeverPassesForAPlayer() {
        // Its requests that land on the full-size rendition: frame 37·i mod 100 for the even i
        // whose width (i mod 2000 + 1) is above the canvas (480 px).
        var cursors = PlayCursors(at: 0)
        var moves: [PlayCursors.Move: Int] = [:]
        for i in stride(from: 0, to: 20_000, by: 2) where i % 2000 + 1 > 480 {
            moves[cursors.note(37 * i % 100, frameCount: 100), default: 0] += 1
        }
        #expect(moves[.playOn] == nil, "\(moves)")
    }

    @Test func aPlayerAmongSeeksPlaysOnWithEveryFrame() {
        var cursors = PlayCursors(at: 0)
        var player: [PlayCursors.Move] = []
        for i in 1..<3000 {
            if i % 3 == 0 {
                player.append(cursors.note(i / 3 % 100, frameCount: 100))
            } else {
                #expect(cursors.note(37 * i % 100, frameCount: 100) != .playOn)
            }
        }
        #expect(player.filter { $0 == .playOn }.count >= player.count - 2, "\(player.prefix(10))")
    }

    @Test func seeksNeverPushOutACursorThatPlayedOn() {
        var cursors = PlayCursors(at: 0)
        #expect(cursors.note(1, frameCount: 100) == .step)
        #expect(cursors.note(2, frameCount: 100) == .playOn)
        #expect(PlayCursors.overtakenReach >= PlayCursors.playOnReach)
        // More places than there are cursors, each more than the reach from the others and from
        // the player, asked for twice over.
        let places = stride(from: 11, through: 92, by: PlayCursors.overtakenReach + 1).map { $0 }
        #expect(places.count > PlayCursors.capacity)
        for place in places + places {
            #expect(cursors.note(place, frameCount: 100) != .playOn, "\(place)")
        }
        #expect(cursors.positions.contains(2))
        #expect(cursors.note(3, frameCount: 100) == .playOn)
        #expect(cursors.positions.count <= PlayCursors.capacity)
    }
}

/// What the cursors decide in the cache: a rendition asked for frames all over is made on demand
/// (no window at a playhead nobody moves), one played by two viewers at different points keeps
/// its decode-ahead, and a new player's first request gets a window at once.
@Suite("Sought and played renditions")
struct SoughtRenditionTests {
    let now = 1000.0

    func state(_ entries: [ImageEntry]) -> CacheState {
        var state = CacheState(budget: 64 << 20, activeSeconds: 30)
        for entry in entries { state.entries[entry.id] = entry }
        return state
    }

    @Test func aFullSizeEntryAskedForFramesAllOverIsMadeOnDemandAndKeepsItsPoster() throws {
        let image = try TestImages.long()
        let full = ImageEntry(image: CacheableImage(id: "f", image: image), now: now, tick: 1)
        var state = state([full])
        state.refreshWindows(now: now, cap: nil)
        #expect(full.window > 0, "a first request gets a window at once")
        for k in [37, 74, 11, 48] { #expect(!full.movePlayhead(to: k)) }
        state.refreshWindows(now: now, cap: nil)
        #expect(full.isSought && full.onDemand && full.window == 0 && full.playhead == 0)
        #expect(full.pinsPoster)
        // A seek that lands a few frames after an earlier one moves a cursor once: not yet a
        // player. Moving on again is: a window again.
        #expect(full.notePlaying(49) == .step && full.isSought && full.playhead == 49)
        #expect(full.notePlaying(50) == .playOn)
        state.refreshWindows(now: now, cap: nil)
        #expect(!full.isSought && !full.onDemand && full.window > 0 && full.playhead == 50)
    }

    @Test func twoViewersFiftyFramesApartKeepDecodeAheadAndMoveThePlayheadInTurn() throws {
        let image = try TestImages.long()
        let full = ImageEntry(image: CacheableImage(id: "f", image: image), now: now, tick: 1)
        var state = state([full])
        var moves = 0
        for k in 0..<20 {
            if full.movePlayhead(to: k) { moves += 1 }
            if full.movePlayhead(to: 50 + k) { moves += 1 }
        }
        state.refreshWindows(now: now, cap: nil)
        // Only the second viewer's first request was a seek; every other request moved on.
        #expect(moves == 38)
        #expect(full.isPlayed && !full.isSought && !full.onDemand && full.window > 0 && full.playhead == 69)
    }
}
