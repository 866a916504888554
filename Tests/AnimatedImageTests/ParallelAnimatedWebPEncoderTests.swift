import FlipbookTestSupport
import Testing

@testable import AnimatedImage

/// The lossy previews' encoder makes, with its candidates encoded on several threads, exactly
/// the bytes libwebp's `WebPAnimEncoder` makes with `minimize_size` from the same frames: over
/// corpus animations with transparency, every disposal and blend, frames that do not change (which
/// libwebp merges, and the preview splits again), at several qualities and sizes.
@Suite("Parallel animated WebP encoder")
struct ParallelAnimatedWebPEncoderTests {
    static let cases: [(String, Int, Int)] = [
        ("wuffs/muybridge.gif", 120, 75), ("pillow/gif/iss634.gif", 90, 75), ("pillow/gif/dispose_bgnd.gif", 40, 75),
        ("pillow/gif/dispose_bgnd_transparency.gif", 64, 50), ("pygif/dispose-restore-previous.gif", 64, 90),
        ("image-rs-image/images/png/apng/ball.png", 80, 75), ("pillow/apng/dispose_op_previous_region.png", 32, 30),
        ("pillow/webp/iss634.webp", 100, 75), ("image-rs-image/images/webp/extended_images/anim.webp", 70, 100),
        // Shown at their size, few colours: each sub-frame also tried lossless.
        ("pygif/animation-multi-image.gif", 320, 75), ("pillow/apng/dispose_op_none_region.png", 320, 75),
        ("wuffs/animated-red-blue.gif", 320, 90), ("peterdn-gif-test-suite/gifs/animated_loop.gif", 320, 75),
        ("pillow/apng/dispose_op_previous_region.png", 320, 50),
    ]

    static let tuning = PreviewMaker.lossyTuning

    /// libwebp's own encoder as the parallel one works for an animation starting with `first`:
    /// `minimize_size`, and `allow_mixed` when that frame has few colours.
    static func reference(_ first: Canvas, loopCount: Int, quality: Int) throws -> AnimatedWebPEncoder {
        try AnimatedWebPEncoder(
            width: first.width, height: first.height, loopCount: loopCount, config: tuning.configuration(quality: quality),
            minimizeSize: true, allowMixed: PreviewMaker.hasFewColours(first))
    }

    /// The parallel encoder as previews use it for an animation starting with `first`.
    static func parallel(_ first: Canvas, loopCount: Int, quality: Int) throws -> ParallelAnimatedWebPEncoder {
        try ParallelAnimatedWebPEncoder(
            width: first.width, height: first.height, loopCount: loopCount, config: tuning.configuration(quality: quality),
            allowMixed: PreviewMaker.hasFewColours(first))
    }

    @Test(arguments: cases)
    func theSameBytesAsWebPAnimEncoder(path: String, width: Int, quality: Int) throws {
        let image = try AnimatedImage(bytes: Corpus.bytes(path))
        let rendition = try RenditionRequest(width: width, format: .webp, quality: quality).rendition(
            canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: 4096)
        let renderer = FrameRenderer(image: image)
        let frames = try (0..<image.frameCount).map { try RenditionEncoder.pixels(renderer.render($0), as: rendition) }
        let reference = try Self.reference(frames[0], loopCount: image.timeline.playCount, quality: quality)
        let parallel = try Self.parallel(frames[0], loopCount: image.timeline.playCount, quality: quality)
        for (frame, delay) in zip(frames, image.timeline.delaysMs) {
            try reference.add(frame, durationMs: delay)
            try parallel.add(frame, durationMs: delay)
        }
        let expected = try reference.finish()
        let made = try parallel.finish()
        let same = made == expected
        #expect(same, "\(path): \(made.count) bytes, libwebp's \(expected.count)")
    }

    /// Frames that alternate between two pictures, runs of the same picture, and a frame alone:
    /// the guesses of the previous frame's choice are sometimes wrong, and the merged frames
    /// come back, each with its own duration.
    @Test func alternatingAndRepeatedFrames() throws {
        var generator = SplitMix64(seed: 9)
        func picture(_ shade: UInt8, box: PixelRect) -> Canvas {
            var canvas = Canvas(width: 48, height: 40)
            for y in 0..<40 {
                for x in 0..<48 {
                    let i = (y * 48 + x) * 4
                    let inside = box.contains(PixelRect(x: x, y: y, width: 1, height: 1))
                    let noise = UInt8(truncatingIfNeeded: generator.next() % 7)
                    canvas.pixels[i..<i + 4] = inside ? [shade, 255 - shade, noise &* 9, 255] : [20, 40, 60, x < 4 ? 0 : 255]
                }
            }
            return canvas
        }
        let a = picture(200, box: PixelRect(x: 4, y: 4, width: 20, height: 10))
        let b = picture(30, box: PixelRect(x: 20, y: 18, width: 24, height: 20))
        let frames = [a, b, a, b, b, b, a, a, b, a, b, b, a]
        let delays = [40, 30, 20, 100, 10, 10, 50, 60, 70, 80, 90, 100, 110]
        let reference = try Self.reference(a, loopCount: 2, quality: 75)
        let parallel = try Self.parallel(a, loopCount: 2, quality: 75)
        for (frame, delay) in zip(frames, delays) {
            try reference.add(frame, durationMs: delay)
            try parallel.add(frame, durationMs: delay)
        }
        let made = try parallel.finish()
        let same = made == (try reference.finish())
        #expect(same)
        let readBack = try AnimatedImage(bytes: made)
        #expect(readBack.frameCount == frames.count)
        #expect(readBack.timeline.rawDelaysMs == delays)
        #expect(readBack.timeline.playCount == 2)
    }

    /// One picture shown throughout: libwebp merges every frame into the first and makes a
    /// still image of it; the frames, their durations and the loop count come back (lossless
    /// too, which libwebp's encoder makes).
    @Test(arguments: [0, 1, 3])
    func everyFrameTheSame(loopCount: Int) throws {
        var canvas = Canvas(width: 30, height: 20)
        for i in stride(from: 0, to: canvas.pixels.count, by: 4) { canvas.pixels[i..<i + 4] = [90, 120, 200, 255] }
        let reference = try Self.reference(canvas, loopCount: loopCount, quality: 75)
        let parallel = try Self.parallel(canvas, loopCount: loopCount, quality: 75)
        let lossless = try AnimatedWebPEncoder(width: 30, height: 20, loopCount: loopCount, quality: nil)
        for delay in [100, 200, 300] {
            try reference.add(canvas, durationMs: delay)
            try parallel.add(canvas, durationMs: delay)
            try lossless.add(canvas, durationMs: delay)
        }
        let made = try parallel.finish()
        let same = made == (try reference.finish())
        #expect(same)
        for animation in [made, try lossless.finish()] {
            let readBack = try AnimatedImage(bytes: animation)
            #expect(readBack.timeline.rawDelaysMs == [100, 200, 300])
            #expect(readBack.timeline.playCount == loopCount)
        }
    }

    /// A build stopped half-way drops its encoder with candidates still encoding: nothing is
    /// left running or waited for forever, and an encoder made next works as before.
    @Test func droppedHalfWay() throws {
        let image = try AnimatedImage(bytes: Corpus.bytes("wuffs/muybridge.gif"))
        let rendition = try RenditionRequest(width: 100, format: .webp, quality: 75).rendition(
            canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: 4096)
        let renderer = FrameRenderer(image: image)
        let frames = try (0..<image.frameCount).map { try RenditionEncoder.pixels(renderer.render($0), as: rendition) }
        let config = try Self.tuning.configuration(quality: 75)
        for count in [1, 2, 5, frames.count - 1] {
            let dropped = try ParallelAnimatedWebPEncoder(
                width: rendition.outputWidth, height: rendition.outputHeight, loopCount: 0, config: config)
            for frame in frames.prefix(count) { try dropped.add(frame, durationMs: 40) }
        }
        let whole = try ParallelAnimatedWebPEncoder(
            width: rendition.outputWidth, height: rendition.outputHeight, loopCount: 0, config: config)
        for frame in frames { try whole.add(frame, durationMs: 40) }
        #expect(try AnimatedImage(bytes: whole.finish()).frameCount == frames.count)
    }

    @Test func refusesWhatAnAnimationCannotBe() throws {
        let config = try Self.tuning.configuration(quality: 75)
        #expect(throws: WebPEncodingError.self) {
            try ParallelAnimatedWebPEncoder(width: 0, height: 5, loopCount: 0, config: config)
        }
        let encoder = try ParallelAnimatedWebPEncoder(width: 4, height: 4, loopCount: 0, config: config)
        #expect(throws: WebPEncodingError.self) { try encoder.add(Canvas(width: 5, height: 4), durationMs: 10) }
        #expect(throws: WebPEncodingError.self) { try encoder.finish() }
    }
}
