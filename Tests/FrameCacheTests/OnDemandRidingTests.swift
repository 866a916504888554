import AnimatedImage
import FlipbookTestSupport
import Testing

@testable import FrameCache

/// A rendition played but made on demand (beyond `decodeAheadRenditions`) takes the frames its
/// lookahead covers from composites made for the image's other renditions: checked on a
/// hand-built state (no threads), through the windows worked out and the renditions a job's
/// composite is encoded for.
@Suite("On-demand renditions ride composites")
struct OnDemandRidingTests {
    let now = 1000.0

    /// Renditions of `long` 120, 80 and 60 px wide sharing one source: A and B played (three
    /// frames each, B less recently), C asked for once.
    func makeState() throws -> (CacheState, a: ImageEntry, b: ImageEntry, c: ImageEntry) {
        let image = try TestImages.long()
        var state = CacheState(budget: 256 << 20, activeSeconds: 30)
        let first = CacheableImage(id: "m", image: image, rendition: try rendition(image, width: 120))
        let source = ImageSource(first)
        func add(_ cacheable: CacheableImage, playing frames: [Int], at time: Double) -> ImageEntry {
            let entry = ImageEntry(image: cacheable, source: source, now: time, tick: state.nextTick())
            source.entries.append(entry)
            state.entries[entry.id] = entry
            for k in frames { _ = entry.movePlayhead(to: k) }
            return entry
        }
        let b = add(
            CacheableImage(id: "m", image: image, rendition: try rendition(image, width: 80)), playing: [19, 20, 21], at: now - 1)
        let a = add(first, playing: [0, 1, 2], at: now)
        let c = add(CacheableImage(id: "m", image: image, rendition: try rendition(image, width: 60)), playing: [], at: now)
        c.playhead = 21
        return (state, a, b, c)
    }

    func rendition(_ image: AnimatedImage, width: Int) throws -> FrameRendition {
        try RenditionRequest(width: width, format: .png)
            .rendition(canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: 4096)
    }

    @Test func aPlayedOnDemandRenditionWantsTheFramesItsLookaheadCovers() throws {
        var (state, a, b, c) = try makeState()
        let policy = WindowPolicy()
        state.policy.decodeAheadRenditions = 1
        state.refreshWindows(now: now, cap: nil)
        #expect(!a.onDemand && a.window > 0, "the most recently played is decoded ahead")
        #expect(b.onDemand && b.window == 0 && c.onDemand)
        let lookahead = policy.lookahead(
            of: .init(frameCount: b.frameCount, decodedFrameBytes: 1, encodedFrameBytes: 1, loopMs: b.loopMs))
        #expect(lookahead > 2, "more than the next two frames (the rule before)")
        #expect(b.ridingFrames == lookahead)
        // A composite of each frame after B's playhead (21) within its lookahead is encoded for
        // B too; the frame at the playhead, and frames beyond, are not. C was never played.
        for k in 22...(21 + lookahead) {
            #expect(state.policy.renditionsWanting(a, k, in: state).contains { $0 === b }, "frame \(k)")
        }
        #expect(!state.policy.renditionsWanting(a, 22 + lookahead, in: state).contains { $0 === b })
        #expect(!state.policy.renditionsWanting(a, 21, in: state).contains { $0 === b })
        #expect(
            c.ridingFrames == 0 && !(22...30).contains { state.policy.renditionsWanting(a, $0, in: state).contains { $0 === c } })
        // A frame B already holds is not made again for it.
        state.store(CachedFrame(png: [1, 2, 3], attachment: nil), in: b, at: 22)
        #expect(!state.policy.renditionsWanting(a, 22, in: state).contains { $0 === b })
    }

    @Test func underAWindowCapItRidesNoFurtherThanTheCap() throws {
        var (state, _, b, _) = try makeState()
        state.policy.decodeAheadRenditions = 1
        state.refreshWindows(now: now, cap: 1)
        #expect(b.onDemand && b.ridingFrames == 1)
    }
}
