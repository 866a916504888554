import FlipbookTestSupport
import Testing

@testable import AnimatedImage

/// Frame k rendered from a cold start equals frame k reached by playing from frame 0, for
/// every k, and costs a bounded number of decodes.
@Suite("Random access")
struct RandomAccessTests {
    static let corpusAnimations = [
        "wuffs/muybridge.gif", "pillow/gif/iss634.gif", "pillow/gif/dispose_bgnd_transparency.gif",
        "pygif/dispose-restore-previous.gif", "peterdn-gif-test-suite/gifs/animated_transparent_restoreprev_loop.gif",
        "image-rs-image/images/png/apng/ball.png", "pillow/apng/blend_op_over_near_transparent.png",
        "pillow/apng/dispose_op_previous_region.png", "pillow/webp/iss634.webp",
        "image-rs-image/images/webp/extended_images/anim.webp",
    ]

    static func sequentialFrames(_ image: AnimatedImage) throws -> [Canvas] {
        let renderer = FrameRenderer(image: image)
        return try (0..<image.frameCount).map { try renderer.render($0) }
    }

    @Test(arguments: corpusAnimations)
    func coldRenderEqualsSequential(_ path: String) throws {
        let image = try AnimatedImage(bytes: try Corpus.bytes(path))
        let expected = try Self.sequentialFrames(image)
        for k in 0..<image.frameCount {
            let cold = FrameRenderer(image: image)
            #expect(try cold.render(k) == expected[k], "\(path) frame \(k)")
            // From cold, only the frames after the nearest replay start are decoded.
            #expect(cold.decodeCount == k - image.dependencies.replayStart(atOrBefore: k) + 1)
        }
    }

    @Test(arguments: corpusAnimations)
    func randomOrderOnOneRendererEqualsSequential(_ path: String) throws {
        let image = try AnimatedImage(bytes: try Corpus.bytes(path))
        let expected = try Self.sequentialFrames(image)
        let renderer = FrameRenderer(image: image, checkpointInterval: 4)
        var generator = SplitMix64(seed: 7)
        for _ in 0..<(image.frameCount * 3) {
            let k = Int(generator.next() % UInt64(image.frameCount))
            #expect(try renderer.render(k) == expected[k], "\(path) frame \(k)")
        }
    }

    /// A renderer that resumes from frame j's PNG (as the frame cache does when it has evicted a
    /// canvas) renders every later frame exactly as one that played from the start — for every
    /// frame that allows it, with every disposal and blend in the list.
    @Test(arguments: corpusAnimations)
    func resumingFromAFramesPNGEqualsSequential(_ path: String) throws {
        let image = try AnimatedImage(bytes: try Corpus.bytes(path))
        let expected = try Self.sequentialFrames(image)
        let encoder = PNGEncoder()
        var resumed = 0
        for j in 0..<image.frameCount {
            let renderer = FrameRenderer(image: image)
            guard renderer.canResume(after: j) else {
                #expect(image.index.frames[j].disposal == .previous)
                continue
            }
            try renderer.resume(after: j, png: encoder.encode(expected[j]))
            resumed += 1
            #expect(renderer.framesToDecode(for: j) == 0)
            #expect(try renderer.render(j) == expected[j], "\(path) frame \(j) itself")
            for k in (j + 1)..<min(image.frameCount, j + 4) {
                #expect(renderer.framesToDecode(for: k) <= k - j)
                #expect(try renderer.render(k) == expected[k], "\(path) frame \(k) after resuming at \(j)")
            }
            // Straight after resuming, the next frame costs one decode.
            if j + 1 < image.frameCount {
                let fresh = FrameRenderer(image: image)
                try fresh.resume(after: j, png: encoder.encode(expected[j]))
                #expect(fresh.framesToDecode(for: j + 1) == 1)
                _ = try fresh.render(j + 1)
                #expect(fresh.decodeCount == 1)
            }
        }
        #expect(resumed > 0)
    }

    /// Alpha-0 pixels carrying colour, and translucent ones: the PNG round trip must give back
    /// the same bytes, or a resumed frame would differ from a replayed one. 8×8 has 64 colours
    /// (a palette PNG with tRNS); 32×32 has 1,024 (RGBA).
    @Test(arguments: [8, 32])
    func resumingKeepsTheColourOfTransparentPixels(side: Int) throws {
        var pixels: [UInt8] = []
        for i in 0..<(side * side) {
            pixels += [UInt8(i % 256), UInt8(255 - i / 4 % 256), 77, i % 3 == 0 ? 0 : (i % 3 == 1 ? 128 : 255)]
        }
        let canvas = Canvas(width: side, height: side, pixels: pixels)
        var gif = GIFBuilder(width: side, height: side)
        gif.frames = [
            GIFBuilder.Frame(rect: (0, 0, side, side), indices: [UInt8](repeating: 1, count: side * side)),
            GIFBuilder.Frame(rect: (0, 0, 1, 1), indices: [2]),
        ]
        let image = try AnimatedImage(bytes: gif.build())
        let renderer = FrameRenderer(image: image)
        try renderer.resume(after: 0, png: PNGEncoder().encode(canvas))
        #expect(try renderer.render(0) == canvas)
    }

    /// 100 partial frames, each depending on all before it (no independent frame but the first),
    /// with some restore-previous frames in between.
    static func dependentAnimation() throws -> AnimatedImage {
        var gif = GIFBuilder(width: 20, height: 10)
        gif.frames = (0..<100).map { i in
            var frame = GIFBuilder.Frame(
                rect: (i % 20, (i / 20) % 10, 1 + i % 3, 1),
                indices: [UInt8](repeating: UInt8(1 + i % 3), count: 1 + i % 3))
            frame.disposal = i % 7 == 3 ? 3 : (i % 11 == 5 ? 2 : 1)
            frame.transparentIndex = i % 5 == 0 ? 0 : nil
            return frame
        }
        gif.frames[0] = GIFBuilder.Frame(rect: (0, 0, 20, 10), indices: [UInt8](repeating: 1, count: 200))
        return try AnimatedImage(bytes: gif.build())
    }

    @Test func withoutIndependentFramesCheckpointsBoundTheCost() throws {
        let image = try Self.dependentAnimation()
        #expect(image.dependencies.independent.filter { $0 }.count == 1)
        let expected = try Self.sequentialFrames(image)
        let renderer = FrameRenderer(image: image, checkpointInterval: 16)
        // Playing once in order decodes each frame exactly once.
        for k in 0..<image.frameCount { _ = try renderer.render(k) }
        #expect(renderer.decodeCount == image.frameCount)
        #expect(renderer.checkpointIndices == [16, 32, 48, 64, 80, 96])
        // Afterwards any frame costs at most 16 decodes, and is right.
        var generator = SplitMix64(seed: 42)
        for _ in 0..<300 {
            let k = Int(generator.next() % 100)
            let before = renderer.decodeCount
            #expect(try renderer.render(k) == expected[k])
            #expect(renderer.decodeCount - before <= 16, "frame \(k) cost \(renderer.decodeCount - before)")
        }
    }

    @Test func everyFrameFromColdEqualsSequentialWithoutIndependentFrames() throws {
        let image = try Self.dependentAnimation()
        let expected = try Self.sequentialFrames(image)
        for k in 0..<image.frameCount {
            #expect(try FrameRenderer(image: image).render(k) == expected[k], "frame \(k)")
        }
    }

    @Test func checkpointsCanBeDiscarded() throws {
        let image = try Self.dependentAnimation()
        let renderer = FrameRenderer(image: image)
        _ = try renderer.render(99)
        #expect(renderer.checkpointBytes == 6 * image.index.bytesPerFrame)
        renderer.discardCheckpoints()
        #expect(renderer.checkpointBytes == 0)
        let expected = try Self.sequentialFrames(image)
        #expect(try renderer.render(50) == expected[50])
    }

    @Test func checkpointBudgetIsRespected() throws {
        let image = try Self.dependentAnimation()
        let renderer = FrameRenderer(image: image, checkpointInterval: 8, checkpointBudget: 3 * image.index.bytesPerFrame)
        _ = try renderer.render(99)
        #expect(renderer.checkpointBytes <= 3 * image.index.bytesPerFrame)
        #expect(renderer.checkpointIndices.count == 3)
    }

    @Test func independentFramesAreFound() throws {
        // A full-canvas opaque frame after partial ones starts a new independent run.
        var gif = GIFBuilder(width: 4, height: 4)
        let full = GIFBuilder.Frame(rect: (0, 0, 4, 4), indices: [UInt8](repeating: 1, count: 16))
        let part = GIFBuilder.Frame(rect: (1, 1, 2, 2), indices: [UInt8](repeating: 2, count: 4))
        var clearing = part
        clearing.disposal = 2
        var transparentFull = full
        transparentFull.transparentIndex = 0
        gif.frames = [full, part, full, part, transparentFull, clearing, part]
        let deps = try AnimatedImage(bytes: gif.build()).dependencies
        #expect(deps.independent == [true, false, true, false, false, false, false])
        #expect(deps.replayStart(atOrBefore: 6) == 2)
    }

    @Test func outOfRangeIsAnError() throws {
        let image = try Self.dependentAnimation()
        #expect(throws: AnimatedImageError.frameOutOfRange(index: 100, frameCount: 100)) {
            try FrameRenderer(image: image).render(100)
        }
        #expect(throws: AnimatedImageError.frameOutOfRange(index: -1, frameCount: 100)) {
            try FrameRenderer(image: image).render(-1)
        }
    }
}
