import AnimatedImage
import FlipbookTestSupport
import Testing

/// Animated previews: read back with libwebp's demuxer (``AnimatedImage``'s WebP indexer), they
/// have the original's frame count, effective delays and loop count, and their frames are the
/// rendition frames (exactly when lossless).
@Suite("Preview maker")
struct PreviewMakerTests {
    static let paths = ["pillow/gif/iss634.gif", "pillow/gif/dispose_bgnd.gif", "pillow/webp/iss634.webp"]

    /// Pixels equal where either is visible (a fully transparent pixel's colour is free).
    static func sameVisiblePixels(_ a: Canvas, _ b: Canvas) -> Bool {
        guard a.width == b.width, a.height == b.height else { return false }
        for i in stride(from: 0, to: a.pixels.count, by: 4) where a.pixels[i + 3] != 0 || b.pixels[i + 3] != 0 {
            if a.pixels[i..<i + 4] != b.pixels[i..<i + 4] { return false }
        }
        return true
    }

    @Test(arguments: paths)
    func losslessPreviewHasEveryFrameDelayAndLoopCount(path: String) throws {
        let image = try AnimatedImage(bytes: Corpus.bytes(path))
        let rendition = try RenditionRequest(width: 100, format: .webp).rendition(
            canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: 4096)
        let preview = try PreviewMaker.make(image, rendition: rendition)
        let readBack = try AnimatedImage(bytes: preview)
        #expect(readBack.format == .webp)
        #expect(readBack.frameCount == image.frameCount)
        #expect(readBack.timeline.rawDelaysMs == image.timeline.delaysMs)
        #expect(readBack.timeline.playCount == image.timeline.playCount)
        #expect((readBack.canvasWidth, readBack.canvasHeight) == (rendition.outputWidth, rendition.outputHeight))
        let original = FrameRenderer(image: image)
        let decoded = FrameRenderer(image: readBack)
        for k in 0..<image.frameCount {
            let expected = try RenditionEncoder.pixels(original.render(k), as: rendition)
            #expect(Self.sameVisiblePixels(try decoded.render(k), expected), "frame \(k) of \(path)")
        }
    }

    @Test func lossyPreviewKeepsTheTimeline() throws {
        let image = try AnimatedImage(bytes: Corpus.bytes("pillow/gif/iss634.gif"))
        let rendition = try RenditionRequest(width: 64, format: .webp, quality: 60).rendition(
            canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: 4096)
        let readBack = try AnimatedImage(bytes: PreviewMaker.make(image, rendition: rendition))
        #expect(readBack.frameCount == image.frameCount)
        #expect(readBack.timeline.rawDelaysMs == image.timeline.delaysMs)
    }

    @Test func identicalFramesAreNotMerged() throws {
        var a = Canvas(width: 8, height: 6)
        for i in stride(from: 0, to: a.pixels.count, by: 4) { a.pixels[i..<i + 4] = [200, 10, 10, 255] }
        var b = a
        b.pixels[0..<4] = [0, 0, 255, 128]
        let frames = [a, a, a, b, b, a]
        let delays = [40, 10, 250, 30, 70, 100]
        let encoder = try AnimatedWebPEncoder(width: 8, height: 6, loopCount: 3, quality: nil)
        for (frame, delay) in zip(frames, delays) { try encoder.add(frame, durationMs: delay) }
        let readBack = try AnimatedImage(bytes: encoder.finish())
        #expect(readBack.frameCount == frames.count)
        #expect(readBack.timeline.rawDelaysMs == delays)
        #expect(readBack.timeline.playCount == 3)
        let renderer = FrameRenderer(image: readBack)
        for (k, frame) in frames.enumerated() {
            #expect(try renderer.render(k) == frame, "frame \(k)")
        }
    }

    @Test func allFramesIdenticalStayAnAnimation() throws {
        let frame = Canvas(width: 4, height: 4, pixels: [UInt8](repeating: 90, count: 64))
        let encoder = try AnimatedWebPEncoder(width: 4, height: 4, loopCount: 0, quality: 80)
        for _ in 0..<4 { try encoder.add(frame, durationMs: 50) }
        let readBack = try AnimatedImage(bytes: encoder.finish())
        #expect(readBack.frameCount == 4)
        #expect(readBack.timeline.rawDelaysMs == [50, 50, 50, 50])
        #expect(readBack.timeline.playCount == 0)
    }

    @Test func aStillImageGivesAStillWebP() throws {
        let image = try AnimatedImage(bytes: Corpus.bytes("pillow/webp/transparent.webp"))
        #expect(image.frameCount == 1)
        let rendition = try RenditionRequest(width: 50, format: .webp).rendition(
            canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: 4096)
        let preview = try PreviewMaker.make(image, rendition: rendition)
        #expect(
            preview
                == (try RenditionEncoder().encode(
                    FrameRenderer(image: image).render(0), as: rendition, colorSpace: image.colorSpace)))
        #expect(try AnimatedImage(bytes: preview).frameCount == 1)
    }
}
