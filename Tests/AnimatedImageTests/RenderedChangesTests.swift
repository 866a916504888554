import FlipbookTestSupport
import Testing

@testable import AnimatedImage

/// What a render changed (``FrameRenderer/changedByLastRender``), which previews and storyboards
/// scale alone: every pixel outside it is the previous canvas's, with every disposal and blend
/// in the list, in order, skipping, repeating and jumping back; unknown only when it must be.
@Suite("Rendered changes")
struct RenderedChangesTests {
    /// Pixels of `a` and `b` (same size) that differ outside `rect`.
    static func differencesOutside(_ rect: PixelRect, _ a: Canvas, _ b: Canvas) -> Int {
        var count = 0
        for y in 0..<a.height {
            for x in 0..<a.width where !rect.contains(PixelRect(x: x, y: y, width: 1, height: 1)) {
                let i = (y * a.width + x) * 4
                if a.pixels[i..<i + 4] != b.pixels[i..<i + 4] { count += 1 }
            }
        }
        return count
    }

    @Test(arguments: RandomAccessTests.corpusAnimations)
    func inOrderEveryChangeIsKnownAndHoldsEveryDifference(_ path: String) throws {
        let image = try AnimatedImage(bytes: try Corpus.bytes(path))
        let renderer = FrameRenderer(image: image)
        var previous = try renderer.render(0)
        #expect(renderer.changedByLastRender == nil, "the first render has nothing to differ from")
        for i in 1..<image.frameCount {
            let canvas = try renderer.render(i)
            let changed = try #require(renderer.changedByLastRender, "\(path) frame \(i)")
            #expect(Self.differencesOutside(changed, previous, canvas) == 0, "\(path) frame \(i) outside \(changed)")
            #expect(canvas.rect.contains(changed) || changed.isEmpty)
            previous = canvas
        }
        _ = try renderer.render(image.frameCount - 1)
        #expect(renderer.changedByLastRender == PixelRect(x: 0, y: 0, width: 0, height: 0), "the same frame again")
    }

    @Test(arguments: RandomAccessTests.corpusAnimations)
    func inAnyOrderAKnownChangeHoldsEveryDifference(_ path: String) throws {
        let image = try AnimatedImage(bytes: try Corpus.bytes(path))
        let renderer = FrameRenderer(image: image, checkpointInterval: 4)
        var generator = SplitMix64(seed: 11)
        var previous = try renderer.render(0)
        var last = 0
        var known = 0
        for _ in 0..<(image.frameCount * 3) {
            let step = Int(generator.next() % 6)  // 0 the same, 1–3 ahead, 4–5 anywhere
            let k = step <= 3 ? min(image.frameCount - 1, last + step) : Int(generator.next() % UInt64(image.frameCount))
            let canvas = try renderer.render(k)
            if let changed = renderer.changedByLastRender {
                known += 1
                #expect(Self.differencesOutside(changed, previous, canvas) == 0, "\(path) frame \(k) outside \(changed)")
            }
            previous = canvas
            last = k
        }
        #expect(known > 0)
    }

    /// A resume starts from a canvas the renderer never returned: the next change is unknown.
    @Test func afterAResumeTheChangeIsUnknown() throws {
        let image = try AnimatedImage(bytes: try Corpus.bytes("wuffs/muybridge.gif"))
        let played = FrameRenderer(image: image)
        let third = try (0...3).map { try played.render($0) }[3]
        let renderer = FrameRenderer(image: image)
        _ = try renderer.render(2)
        renderer.resume(after: 3, output: third)
        _ = try renderer.render(4)
        #expect(renderer.changedByLastRender == nil)
        _ = try renderer.render(5)
        #expect(renderer.changedByLastRender != nil)
    }
}
