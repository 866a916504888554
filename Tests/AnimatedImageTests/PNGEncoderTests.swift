import FlipbookTestSupport
import Testing

@testable import AnimatedImage

/// PNG output decoded back with libpng must equal the canvas, in the smallest layout that is exact.
@Suite("PNG encoding")
struct PNGEncoderTests {
    func canvas(width: Int, height: Int, _ pixel: (Int, Int) -> [UInt8]) -> Canvas {
        var pixels: [UInt8] = []
        for y in 0..<height { for x in 0..<width { pixels += pixel(x, y) } }
        return Canvas(width: width, height: height, pixels: pixels)
    }

    /// Encodes, then decodes twice: with libpng (which checks every CRC and the zlib stream) and
    /// with ``PNGInspector`` (zlib and the tests' own unfiltering); both must give the canvas back.
    func roundTrip(_ canvas: Canvas, level: Int = 1) throws -> PNGReader.Image {
        let png = try PNGEncoder(compressionLevel: level).encode(canvas)
        let decoded = try PNGReader.read(png)
        #expect(decoded.width == canvas.width)
        #expect(decoded.height == canvas.height)
        #expect(decoded.pixels == canvas.pixels)
        let inspected = try PNGInspector(png)
        #expect(inspected.everyCRCMatches)
        #expect(try inspected.rgba() == canvas.pixels)
        return decoded
    }

    @Test(arguments: [(2, 1), (4, 2), (16, 4), (17, 8), (256, 8)])
    func paletteImagesUseTheSmallestBitDepth(colors: Int, depth: Int) throws {
        let image = canvas(width: 37, height: 9) { x, y in
            let i = (x + y * 37) % colors
            return [UInt8(i), UInt8(255 - i), UInt8(i / 2), 255]
        }
        let decoded = try roundTrip(image)
        #expect(decoded.colorType == 3)
        #expect(Int(decoded.bitDepth) == depth)
    }

    @Test func translucentPaletteEntries() throws {
        let image = canvas(width: 20, height: 20) { x, y in
            // 16 colours, 8 of them translucent.
            [UInt8(x % 4 * 60), UInt8(y % 4 * 60), 7, x % 4 < 2 ? 255 : UInt8(x % 4 * 50 + y % 4)]
        }
        #expect(try roundTrip(image).colorType == 3)
    }

    @Test func opaqueManyColoursIsRGB() throws {
        let image = canvas(width: 64, height: 64) { x, y in [UInt8(x * 4), UInt8(y * 4), UInt8((x + y) % 256), 255] }
        let decoded = try roundTrip(image)
        #expect(decoded.colorType == 2)
    }

    @Test func translucentManyColoursIsRGBA() throws {
        let image = canvas(width: 64, height: 64) { x, y in [UInt8(x * 4), UInt8(y * 4), 9, UInt8(x * 2 + 1)] }
        #expect(try roundTrip(image).colorType == 6)
    }

    @Test(arguments: [0, 1, 6, 9])
    func everyCompressionLevelIsLossless(level: Int) throws {
        let image = canvas(width: 50, height: 30) { x, y in [UInt8(x * 5), UInt8(y * 8), UInt8(x ^ y), 255] }
        _ = try roundTrip(image, level: level)
    }

    @Test func corpusFramesRoundTrip() throws {
        for path in [
            "pillow/gif/iss634.gif", "pillow/apng/blend_op_over_near_transparent.png",
            "image-rs-image-webp/images/animated/random_lossy.webp", "pillow/webp/transparent.webp",
        ] {
            let image = try AnimatedImage(bytes: try Corpus.bytes(path))
            let renderer = FrameRenderer(image: image)
            for i in Set([0, image.frameCount / 2, image.frameCount - 1]) {
                _ = try roundTrip(try renderer.render(i))
            }
        }
    }

    @Test func transparentPixelsKeepTheirAlphaZero() throws {
        let image = canvas(width: 3, height: 1) { x, _ in x == 1 ? [0, 0, 0, 0] : [200, 100, 50, 255] }
        #expect(try roundTrip(image).colorType == 3)
    }
}
