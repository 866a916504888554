import FlipbookTestSupport
import Testing

@testable import AnimatedImage

@Suite("Format sniffing")
struct FormatSniffingTests {
    @Test func gifSignatures() {
        #expect(ImageFormat.sniff(Array("GIF89a".utf8) + [0, 0]) == .gif)
        #expect(ImageFormat.sniff(Array("GIF87a".utf8)) == .gif)
        #expect(ImageFormat.sniff(Array("GIF88a".utf8)) == nil)
        #expect(ImageFormat.sniff(Array("GIF8".utf8)) == nil)
    }

    @Test func pngWithAnimationControlBeforeImageDataIsAPNG() {
        let frame = APNGBuilder.Frame(rect: (0, 0, 1, 1), pixels: solid(1, 2, 3, 255, count: 1))
        let animated = APNGBuilder(width: 1, height: 1, frames: [frame, frame]).build()
        #expect(ImageFormat.sniff(animated) == .apng)
        var still = APNGBuilder(width: 1, height: 1, frames: [frame])
        still.writeAnimationControl = false
        #expect(ImageFormat.sniff(still.build()) == .png)
    }

    @Test func animationControlAfterImageDataIsAStillPNG() throws {
        let bytes = try Corpus.bytes("pillow/apng/chunk_actl_after_idat.png")
        #expect(ImageFormat.sniff(bytes) == .png)
    }

    @Test func webpStillAndAnimated() throws {
        #expect(ImageFormat.sniff(try Corpus.bytes("pillow/webp/iss634.webp")) == .webp)
        #expect(ImageFormat.sniff(try Corpus.bytes("pillow/webp/anim_frame1.webp")) == .webp)
        let riffNotWebP = Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WAVE".utf8)
        #expect(ImageFormat.sniff(riffNotWebP) == nil)
    }

    @Test func anythingElseIsUnsupported() {
        #expect(ImageFormat.sniff([]) == nil)
        #expect(ImageFormat.sniff(Array("<html>".utf8)) == nil)
        #expect(ImageFormat.sniff([0xFF, 0xD8, 0xFF, 0xE0]) == nil)  // JPEG
        #expect(throws: AnimatedImageError.unsupportedFormat) { try AnimatedImage(bytes: Array("hello".utf8)) }
    }

    @Test func animatedWebPIsRecognisedByItsAnimationFlag() throws {
        let animated = try AnimatedImage(bytes: try Corpus.bytes("pillow/webp/iss634.webp"))
        #expect(animated.format == .webp)
        #expect(animated.frameCount == 42)
        let still = try AnimatedImage(bytes: try Corpus.bytes("pillow/webp/anim_frame1.webp"))
        #expect(still.frameCount == 1)
        #expect(still.timeline.playCount == 1)
    }
}
