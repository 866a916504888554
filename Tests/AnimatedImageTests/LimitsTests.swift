import FlipbookTestSupport
import Testing

@testable import AnimatedImage

/// Limits are enforced while indexing, before any pixel is decoded, with an error naming the
/// limit and the value.
@Suite("Limits")
struct LimitsTests {
    func gif(width: Int, height: Int, frames: Int) -> [UInt8] {
        var gif = GIFBuilder(width: width, height: height)
        gif.frames = (0..<frames).map { _ in GIFBuilder.Frame(rect: (0, 0, 1, 1), indices: [1]) }
        return gif.build()
    }

    @Test func maxFileBytes() {
        let bytes = gif(width: 2, height: 2, frames: 3)
        #expect(throws: AnimatedImageError.limitExceeded(.maxFileBytes, value: bytes.count, limit: 10)) {
            try AnimatedImage(bytes: bytes, limits: DecodeLimits(maxFileBytes: 10))
        }
    }

    @Test func maxFramePixelsOnTheCanvas() {
        // A 30 000 × 30 000 screen with a 1×1 frame: refused from the header alone.
        #expect(throws: AnimatedImageError.limitExceeded(.maxFramePixels, value: 900_000_000, limit: 50_000_000)) {
            try AnimatedImage(bytes: gif(width: 30_000, height: 30_000, frames: 1))
        }
    }

    @Test func maxFramePixelsOnAFrame() {
        var gif = GIFBuilder(width: 10, height: 10)
        gif.frames = [
            GIFBuilder.Frame(rect: (0, 0, 1, 1), indices: [1]),
            GIFBuilder.Frame(rect: (0, 0, 200, 200), indices: []),
        ]  // no data needed: refused first
        #expect(throws: AnimatedImageError.limitExceeded(.maxFramePixels, value: 40_000, limit: 1_000)) {
            try AnimatedImage(bytes: gif.build(), limits: DecodeLimits(maxFramePixels: 1_000))
        }
    }

    @Test func maxDimension() {
        #expect(throws: AnimatedImageError.limitExceeded(.maxDimension, value: 40_000, limit: 32_767)) {
            try AnimatedImage(bytes: gif(width: 40_000, height: 1, frames: 1))
        }
    }

    @Test func maxFrames() {
        #expect(throws: AnimatedImageError.limitExceeded(.maxFrames, value: 6, limit: 5)) {
            try AnimatedImage(bytes: gif(width: 2, height: 2, frames: 8), limits: DecodeLimits(maxFrames: 5))
        }
    }

    @Test func maxTotalPixels() {
        // 100 × 100 canvas × 3 frames = 30 000 pixels.
        #expect(throws: AnimatedImageError.limitExceeded(.maxTotalPixels, value: 30_000, limit: 25_000)) {
            try AnimatedImage(bytes: gif(width: 100, height: 100, frames: 3), limits: DecodeLimits(maxTotalPixels: 25_000))
        }
    }

    @Test func apngAndWebPLimits() throws {
        let frame = APNGBuilder.Frame(rect: (0, 0, 40, 40), pixels: solid(1, 2, 3, 255, count: 1600))
        let apng = APNGBuilder(width: 40, height: 40, frames: [frame, frame, frame]).build()
        #expect(throws: AnimatedImageError.limitExceeded(.maxFramePixels, value: 1600, limit: 1000)) {
            try AnimatedImage(bytes: apng, limits: DecodeLimits(maxFramePixels: 1000))
        }
        #expect(throws: AnimatedImageError.limitExceeded(.maxFrames, value: 3, limit: 2)) {
            try AnimatedImage(bytes: apng, limits: DecodeLimits(maxFrames: 2))
        }
        let webp = try Corpus.bytes("pillow/webp/iss634.webp")
        #expect(throws: AnimatedImageError.limitExceeded(.maxFrames, value: 11, limit: 10)) {
            try AnimatedImage(bytes: webp, limits: DecodeLimits(maxFrames: 10))
        }
    }

    @Test func messagesNameTheLimitAndTheValue() {
        let error = AnimatedImageError.limitExceeded(.maxFrames, value: 12, limit: 10)
        #expect(error.description.contains("maxFrames"))
        #expect(error.description.contains("12"))
        #expect(error.description.contains("10"))
    }
}
