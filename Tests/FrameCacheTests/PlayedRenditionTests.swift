import AnimatedImage
import FlipbookTestSupport
import Testing

@testable import FrameCache

/// When a rendition counts as played (and may be decoded ahead, keep its poster, and go before
/// one-off requests): its playhead moved on in playback order. Requests that overtake each other
/// by a few frames do not undo that; a seek does.
@Suite("Played renditions")
struct PlayedRenditionTests {
    func entry() throws -> ImageEntry {
        let image = try TestImages.long()
        return ImageEntry(image: CacheableImage(id: "m", image: image), now: 0, tick: 0)
    }

    @Test func framesInOrderArePlayingOnAndWrapAtTheEnd() throws {
        let entry = try entry()
        #expect(!entry.isPlayed)
        for k in [0, 1, 2, 4] { _ = entry.movePlayhead(to: k) }
        #expect(entry.isPlayed && entry.playheadMoves == 3)
        _ = entry.movePlayhead(to: 60)  // a seek
        #expect(!entry.isPlayed)
        _ = entry.movePlayhead(to: 126)  // from 60: a seek too
        #expect(!entry.isPlayed)
        for k in [127, 0, 3] { _ = entry.movePlayhead(to: k) }
        #expect(entry.playheadMoves == 3, "127 → 0 → 3 wraps forward")
    }

    @Test func aRequestThatOvertookAnotherCountsForNothing() throws {
        let entry = try entry()
        for k in [10, 11, 14, 12, 13] { _ = entry.movePlayhead(to: k) }
        #expect(entry.isPlayed && entry.playheadMoves == 3, "14 → 12 is neither playing on nor a seek")
    }

    @Test func framesAllOverTheAnimationAreNotPlaying() throws {
        let entry = try entry()
        for i in 0..<500 { _ = entry.movePlayhead(to: (i * 37) % entry.frameCount) }
        #expect(!entry.isPlayed)
        for k in [40, 40 + ImageEntry.playStep + 1] { _ = entry.movePlayhead(to: k) }
        #expect(!entry.isPlayed, "a step longer than \(ImageEntry.playStep) frames is a seek")
    }

    @Test func theFullSizeEntryAskedForFramesAllOverIsMadeOnDemandUntilItPlaysOn() throws {
        let entry = try entry()
        var state = CacheState(budget: 256 << 20, activeSeconds: 30)
        state.entries[entry.id] = entry
        let policy = WindowPolicy()
        state.refreshWindows(now: 0, policy: policy, cap: nil, decodeThreads: 1)
        #expect(!entry.onDemand && entry.window > 0, "a first request is decoded ahead from")
        for i in 1..<20 { _ = entry.movePlayhead(to: (i * 37) % entry.frameCount) }
        state.refreshWindows(now: 1, policy: policy, cap: nil, decodeThreads: 1)
        #expect(entry.sought && entry.onDemand && entry.window == 0)
        _ = entry.movePlayhead(to: entry.playhead + 1)
        state.refreshWindows(now: 2, policy: policy, cap: nil, decodeThreads: 1)
        #expect(!entry.sought && !entry.onDemand && entry.window > 0)
    }
}
