import FlipbookTestSupport
import Testing

@testable import AnimatedImage

/// WebP frames: lossless ones decode to the canvas (alpha-0 pixels aside), lossy ones to its size;
/// an ICC profile travels as `ICCP`.
@Suite("WebP encoding")
struct WebPEncoderTests {
    func decode(_ webp: [UInt8]) throws -> (Canvas, AnimatedImage) {
        let image = try AnimatedImage(bytes: webp)
        return (try FrameRenderer(image: image).render(0), image)
    }

    func sample(width: Int, height: Int) -> Canvas {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let a: UInt8 = x < width / 4 ? 0 : x < width / 2 ? UInt8((y * 9) & 255) : 255
                pixels += [UInt8((x * 5) & 255), UInt8((y * 3) & 255), UInt8((x * y) & 255), a]
            }
        }
        return Canvas(width: width, height: height, pixels: pixels)
    }

    @Test func losslessFramesDecodeToTheCanvas() throws {
        let canvas = sample(width: 97, height: 61)
        let (decoded, _) = try decode(try WebPEncoder().encode(canvas, quality: nil))
        #expect(decoded.width == canvas.width && decoded.height == canvas.height)
        for i in stride(from: 0, to: canvas.pixels.count, by: 4) {
            let want = Array(canvas.pixels[i..<i + 4])
            let got = Array(decoded.pixels[i..<i + 4])
            if want[3] == 0 { #expect(got[3] == 0) } else { #expect(got == want, "pixel \(i / 4)") }
        }
    }

    @Test func lossyFramesHaveTheSizeAndShrinkWithQuality() throws {
        let canvas = sample(width: 160, height: 90)
        let low = try WebPEncoder().encode(canvas, quality: 20)
        let high = try WebPEncoder().encode(canvas, quality: 95)
        #expect(low.count < high.count)
        let (decoded, _) = try decode(low)
        #expect(decoded.width == 160 && decoded.height == 90)
        #expect(low.starts(with: Array("RIFF".utf8)))
    }

    @Test func anICCProfileTravelsAsICCP() throws {
        let profile = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let colorSpace = try profile.withUnsafeBytes { try ColorSpaceChunks.iccProfile($0) }
        let canvas = sample(width: 20, height: 10)
        for quality in [nil, 80] {
            let webp = try WebPEncoder().encode(canvas, quality: quality, colorSpace: colorSpace)
            #expect(Array(webp[12..<16]) == Array("VP8X".utf8))
            #expect(webp[20] & 0x20 != 0, "the VP8X flags say there is an ICC profile")
            let (decoded, image) = try decode(webp)
            #expect(try image.colorSpace.iccProfileBytes() == profile)
            #expect(decoded.width == 20)
        }
        // Without a profile: a plain VP8/VP8L file.
        let plain = try WebPEncoder().encode(canvas, quality: nil)
        #expect(Array(plain[12..<16]) == Array("VP8L".utf8))
    }

    @Test func sizesWebPCannotHoldAreRefused() {
        #expect(throws: WebPEncodingError.self) { try WebPEncoder().encode(Canvas(width: 16384, height: 1), quality: nil) }
    }
}
