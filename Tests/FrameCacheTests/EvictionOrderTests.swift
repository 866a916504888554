import AnimatedImage
import FlipbookTestSupport
import Testing

@testable import FrameCache

/// The order in which `CacheState.makeRoom` takes things, checked on a hand-built state (no
/// threads): idle images, frames behind playheads (the one needed again last first, the resume
/// anchor kept), idle decoders, anchors; frames in windows only for a waiting request; posters last.
@Suite("Eviction order")
struct EvictionOrderTests {
    static let frameBytes = 1_000
    let now = 1000.0

    /// A state with three images of `long` (128 frames):
    /// - A active, playhead 10, window 3 (10, 11, 12), frames 0 (poster), 5…9 behind (9 is the
    ///   anchor), 10…12 and 40 (behind, far);
    /// - B idle (asked for long ago), frames 0, 3, 4 and a decoder;
    /// - C active, playhead 0, window 1, frame 0 and a decoder not in use.
    func makeState() throws -> (CacheState, a: ImageEntry, b: ImageEntry, c: ImageEntry) {
        let image = try TestImages.long()
        var state = CacheState(budget: 10 << 20, activeSeconds: 30)
        func add(
            _ id: String, frames: [Int], playhead: Int, window: Int, lastRequest: Double,
            decoder: Bool
        ) -> ImageEntry {
            let entry = ImageEntry(image: CacheableImage(id: id, image: image), now: lastRequest, tick: state.nextTick())
            state.entries[id] = entry
            entry.playhead = playhead
            entry.window = window
            for i in frames {
                state.store(CachedFrame(png: [UInt8](repeating: 7, count: Self.frameBytes), attachment: nil), in: entry, at: i)
            }
            if decoder {
                entry.renderer = FrameRenderer(image: image)
                state.updateRendererBytes(entry)
            }
            return entry
        }
        let a = add("a", frames: [0, 5, 6, 7, 8, 9, 10, 11, 12, 40], playhead: 10, window: 3, lastRequest: now, decoder: false)
        let b = add("b", frames: [0, 3, 4], playhead: 4, window: 2, lastRequest: now - 100, decoder: true)
        let c = add("c", frames: [0], playhead: 0, window: 1, lastRequest: now, decoder: true)
        state.refreshWindows(now: now, cap: nil)
        b.lastUse = 0  // the least recently used
        // Keep the hand-made windows (the policy would size them from the budget).
        a.window = 3
        c.window = 1
        return (state, a, b, c)
    }

    func cached(_ entry: ImageEntry) -> [Int] { entry.frames.indices.filter { entry.frames[$0] != nil } }

    @Test func framesAreTakenInTheOrderALoopingPlayerNeedsThemLast() throws {
        let (_, a, _, _) = try makeState()
        let order = Array(a.framesNeededLastFirst())
        #expect(order.count == 128 && Set(order) == Set(0..<128))
        #expect(Array(order.prefix(12)) == [10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 127])
        #expect(order.last == 11, "the frame after the playhead is needed first")
    }

    @Test func idleImagesGoFirstThenFramesBehindNeededLastFirstKeepingTheAnchor() throws {
        var (state, a, b, c) = try makeState()
        let decoder = c.rendererBytes
        let image = c.renderer!.image
        #expect(
            decoder == image.index.bytesPerFrame + ImageSource.residentBytes(of: image, mappingBytes: state.mappingBytes),
            "canvas and image")
        // Room for B's two frames, its decoder, and three of A's frames behind.
        let needed = 2 * Self.frameBytes + b.rendererBytes + 3 * Self.frameBytes
        let made1 = state.makeRoom(
            for: state.holdLimit - state.heldBytes + needed, reach: .outsideWindows, protecting: nil, now: now)
        #expect(made1)
        #expect(cached(b) == [0])
        #expect(b.renderer == nil && b.image == nil, "an idle image lets go of its decoder and file")
        // Behind A's playhead 10: 9 is the anchor; 8, 7 and 6 were played most recently, so a
        // loop needs them last; 5 comes round before them, and 40 long before.
        #expect(cached(a) == [0, 5, 9, 10, 11, 12, 40])
        #expect(c.renderer != nil)
    }

    @Test func theAnchorOutlivesIdleDecodersButNotWindowsOrPosters() throws {
        var (state, a, b, c) = try makeState()
        // Everything evictable without a waiting request, and more: not enough.
        let made2 = state.makeRoom(for: state.holdLimit, reach: .outsideWindows, protecting: nil, now: now)
        #expect(!made2)
        #expect(cached(a) == [0, 10, 11, 12])
        #expect(c.renderer == nil)
        #expect(cached(b) == [0] && cached(c) == [0])
        // Had there been room after the decoders, the anchor would have stayed.
        var (fresh, a2, _, c2) = try makeState()
        let upToDecoders = 2 * Self.frameBytes + fresh.entries["b"]!.rendererBytes + 5 * Self.frameBytes + c2.rendererBytes
        let made3 = fresh.makeRoom(
            for: fresh.holdLimit - fresh.heldBytes + upToDecoders, reach: .outsideWindows, protecting: nil, now: now)
        #expect(made3)
        #expect(cached(a2) == [0, 9, 10, 11, 12])
        #expect(c2.renderer == nil)
        _ = (b, c)
    }

    @Test func aWaitingRequestMayTakeFramesAheadFarthestFirstAndCriticalTakesPosters() throws {
        var (state, a, _, _) = try makeState()
        // All but A's window, the posters and the entries' own cost.
        let behindAndDecoders = state.heldBytes - 3 * Self.frameBytes - 3 * Self.frameBytes - state.entries.overheadBytes
        let made4 = state.makeRoom(
            for: state.holdLimit - state.heldBytes + behindAndDecoders + Self.frameBytes, reach: .inWindows, protecting: nil,
            now: now)
        #expect(made4)
        #expect(cached(a) == [0, 10, 11], "the frame farthest ahead went first")
        let made5 = state.makeRoom(for: state.holdLimit, reach: .inWindows, protecting: nil, now: now)
        #expect(!made5)
        #expect(cached(a) == [0])
        let kept = state.entries["a"]!.overheadBytes + state.entries["c"]!.overheadBytes
        let made6 = state.makeRoom(
            for: state.holdLimit - 2 * Self.frameBytes - kept, reach: .posters, protecting: nil, now: now)
        #expect(made6)
        // B, idle, held nothing more: forgotten with its poster, its own cost gone with it.
        #expect(state.entries["b"] == nil, "one poster went, the least recently used")
        #expect(cached(state.entries["a"]!) == [0] && cached(state.entries["c"]!) == [0])
        #expect(state.heldBytes == 2 * Self.frameBytes + kept)
    }
}
