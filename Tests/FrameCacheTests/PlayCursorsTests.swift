import Testing

@testable import FrameCache

/// Telling a request that plays on from one that overtook another or seeks, with several clients
/// in one rendition (``PlayCursors``), as a table: requests in order, the moves they are.
@Suite("Play cursors")
struct PlayCursorsTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let frameCount: Int
        let start: Int
        let requests: [Int]
        let moves: [PlayCursors.Move]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "playing in order", frameCount: 100, start: 0, requests: [1, 2, 3], moves: [.playOn, .playOn, .playOn]),
        Case(name: "the same frame again", frameCount: 100, start: 5, requests: [5, 5], moves: [.stay, .stay]),
        Case(
            name: "skipping up to the reach", frameCount: 100, start: 0, requests: [8, 17, 26],
            moves: [.playOn, .seek, .seek]),
        Case(
            name: "overtaken requests", frameCount: 100, start: 0, requests: [3, 1, 2, 4],
            moves: [.playOn, .stay, .stay, .playOn]),
        Case(name: "wrapping at the end", frameCount: 10, start: 8, requests: [9, 1, 2], moves: [.playOn, .playOn, .playOn]),
        Case(
            name: "two viewers 50 frames apart", frameCount: 100, start: 0, requests: [50, 1, 51, 2, 52, 3],
            moves: [.seek, .playOn, .playOn, .playOn, .playOn, .playOn]),
        Case(
            name: "a client seeking all over", frameCount: 100, start: 0, requests: [37, 74, 11, 48, 85, 22],
            moves: [.seek, .seek, .seek, .seek, .seek, .seek]),
        Case(
            name: "a seek, then playing on from there", frameCount: 100, start: 10, requests: [60, 61, 62],
            moves: [.seek, .playOn, .playOn]),
        Case(name: "a still image", frameCount: 1, start: 0, requests: [0, 0], moves: [.stay, .stay]),
    ]

    @Test(arguments: cases) func movesAreToldApart(_ c: Case) {
        var cursors = PlayCursors(at: c.start)
        let moves = c.requests.map { cursors.note($0, frameCount: c.frameCount) }
        #expect(moves == c.moves)
    }

    @Test func seeksNeverPushOutACursorThatPlayedOn() {
        var cursors = PlayCursors(at: 0)
        #expect(cursors.note(1, frameCount: 100) == .playOn)
        // More places than there are cursors, each more than the reach from the others and from
        // the player, asked for twice over.
        let places = stride(from: 11, through: 92, by: PlayCursors.reach + 1).map { $0 }
        #expect(places.count > PlayCursors.capacity)
        for place in places + places {
            #expect(cursors.note(place, frameCount: 100) != .playOn, "\(place)")
        }
        #expect(cursors.positions.contains(1))
        #expect(cursors.note(2, frameCount: 100) == .playOn)
        #expect(cursors.positions.count <= PlayCursors.capacity)
    }
}
