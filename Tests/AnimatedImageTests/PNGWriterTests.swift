import Dispatch
import FlipbookTestSupport
import Synchronization
import Testing

@testable import AnimatedImage

/// Flipbook's own PNG writer (chunks, libdeflate zlib stream): every layout it picks round-trips
/// exactly through libpng and through an independent inflate-and-unfilter, the file has the
/// structure the PNG spec asks for, and concurrent encodes do not disturb each other.
@Suite("PNG writer")
struct PNGWriterTests {
    let encoderTests = PNGEncoderTests()

    /// A deterministic pseudo-random byte stream (``SplitMix64`` underneath).
    struct Noise {
        var generator: SplitMix64
        init(state: UInt64) { generator = SplitMix64(seed: state) }
        mutating func next() -> UInt64 { generator.next() }
        mutating func bytes(_ count: Int) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(count + 8)
            while out.count < count { withUnsafeBytes(of: next()) { out += $0 } }
            return Array(out.prefix(count))
        }
    }

    /// A canvas of `colors` distinct colours (some fully transparent with non-zero RGB, some
    /// half transparent when `translucent`), scattered so no row is simple.
    static func paletteCanvas(width: Int, height: Int, colors: Int, translucent: Bool) -> Canvas {
        var noise = Noise(state: UInt64(width * 7919 + height * 104_729 + colors))
        var pixels: [UInt8] = []
        for _ in 0..<width * height {
            let i = Int(noise.next() % UInt64(colors))
            let alpha: UInt8 = !translucent ? 255 : i % 3 == 0 ? 0 : i % 3 == 1 ? 128 : 255
            pixels += [UInt8(i * 37 % 256), UInt8(255 - i), UInt8(i / 3 + 1), alpha]
        }
        return Canvas(width: width, height: height, pixels: pixels)
    }

    /// Noise with more than 256 colours; `alpha` nil keeps every pixel opaque. With alpha, a
    /// fifth of the pixels are fully transparent but keep their random colour values.
    static func noiseCanvas(width: Int, height: Int, alpha: Bool, seed: UInt64 = 1) -> Canvas {
        var noise = Noise(state: seed)
        var pixels = noise.bytes(width * height * 4)
        for i in stride(from: 3, to: pixels.count, by: 4) {
            if !alpha { pixels[i] = 255 } else if pixels[i] < 51 { pixels[i] = 0 }
        }
        return Canvas(width: width, height: height, pixels: pixels)
    }

    /// Every colour type and bit depth Flipbook writes, at widths that leave a partial last byte
    /// (1-, 2- and 4-bit rows) and at a single pixel.
    @Test(
        arguments: [
            (2, false, 3, 1), (4, true, 3, 2), (16, true, 3, 4), (200, true, 3, 8),
            (0, false, 2, 8), (0, true, 6, 8),
        ],
        [(1, 1), (3, 100), (13, 37), (33, 21), (257, 3)])
    func everyColourTypeAndBitDepthRoundTrips(layout: (Int, Bool, Int, Int), size: (Int, Int)) throws {
        let (colors, translucent, colorType, depth) = layout
        let (width, height) = size
        let canvas =
            colors == 0
            ? Self.noiseCanvas(width: width, height: height, alpha: translucent)
            : Self.paletteCanvas(width: width, height: height, colors: colors, translucent: translucent)
        // Tiny canvases may hold fewer colours than asked, so compare with what the quantizer finds.
        let distinct = Set(stride(from: 0, to: canvas.pixels.count, by: 4).map { canvas.pixels[$0..<$0 + 4] }).count
        let expectedType = colors == 0 && distinct > 256 ? colorType : 3
        let expectedDepth = expectedType != 3 ? 8 : distinct <= 2 ? 1 : distinct <= 4 ? 2 : distinct <= 16 ? 4 : 8
        if width * height > 256 {
            #expect(expectedType == colorType && expectedDepth == depth, "the canvas has the layout under test")
        }
        for level in [0, 1, 9] {
            let decoded = try encoderTests.roundTrip(canvas, level: level)
            #expect(Int(decoded.colorType) == expectedType, "level \(level)")
            #expect(Int(decoded.bitDepth) == expectedDepth, "level \(level)")
        }
    }

    @Test func oddWidthOneBitPalette() throws {
        // Two colours, 13 pixels a row: each row ends in a byte with 3 unused bits.
        let canvas = encoderTests.canvas(width: 13, height: 5) { x, y in
            (x * 3 + y) % 5 < 2 ? [10, 20, 30, 255] : [0, 0, 0, 0]
        }
        let decoded = try encoderTests.roundTrip(canvas)
        #expect(decoded.colorType == 3 && decoded.bitDepth == 1)
        let rows = try PNGInspector(try PNGEncoder().encode(canvas)).filteredScanlines()
        #expect(rows.count == 5 * (1 + 2))
        #expect((0..<5).allSatisfy { rows[$0 * 3] == 0 }, "palette rows use filter none")
        #expect((0..<5).allSatisfy { rows[$0 * 3 + 2] & 0b111 == 0 }, "unused bits are zero")
    }

    @Test(arguments: [[7, 8, 9, 255], [7, 8, 9, 0], [7, 8, 9, 100]])
    func onePixel(pixel: [UInt8]) throws {
        let decoded = try encoderTests.roundTrip(Canvas(width: 1, height: 1, pixels: pixel))
        #expect(decoded.colorType == 3 && decoded.bitDepth == 1)
    }

    @Test func transparentPixelsKeepTheirColourValues() throws {
        // Many colours: RGBA, where alpha 0 must not erase RGB.
        let rgba = Self.noiseCanvas(width: 40, height: 30, alpha: true, seed: 9)
        #expect(rgba.pixels.enumerated().contains { $0.offset % 4 == 3 && $0.element == 0 })
        #expect(try encoderTests.roundTrip(rgba).colorType == 6)
        // Few colours: three different fully transparent palette entries stay different.
        let palette = encoderTests.canvas(width: 6, height: 2) { x, _ in [UInt8(x * 40), 1, 2, x < 3 ? 0 : 255] }
        #expect(try encoderTests.roundTrip(palette).colorType == 3)
    }

    @Test(arguments: [true, false])
    func largeNoiseRoundTrips(alpha: Bool) throws {
        let canvas = Self.noiseCanvas(width: 1000, height: 700, alpha: alpha, seed: 42)
        let png = try PNGEncoder().encode(canvas)
        let decoded = try PNGReader.read(png)
        #expect(decoded.colorType == (alpha ? 6 : 2))
        #expect(decoded.pixels == canvas.pixels)
        // Noise does not compress: stored is close to the raw size, and never much above it.
        let raw = 700 * (1 + 1000 * (alpha ? 4 : 3))
        #expect(png.count < raw + raw / 100 + 200)
    }

    @Test func levelZeroStoresAndLevelNineCompresses() throws {
        let canvas = encoderTests.canvas(width: 300, height: 200) { x, y in
            [UInt8(x & 0xFF), UInt8(y), UInt8((x * y) & 0xFF), 255]
        }
        let stored = try PNGEncoder(compressionLevel: 0).encode(canvas)
        let fast = try PNGEncoder(compressionLevel: 1).encode(canvas)
        let small = try PNGEncoder(compressionLevel: 9).encode(canvas)
        #expect(stored.count > 200 * (1 + 300 * 3))
        #expect(fast.count < stored.count / 4)
        #expect(small.count <= fast.count)
        for level in [0, 9] { _ = try encoderTests.roundTrip(canvas, level: level) }
        // Out-of-range levels are clamped to 0 and 9.
        #expect(try PNGEncoder(compressionLevel: -3).encode(canvas) == stored)
        #expect(try PNGEncoder(compressionLevel: 12).encode(canvas) == small)
    }

    @Test(arguments: [(2, false), (16, true), (0, false), (0, true)])
    func fileStructure(colors: Int, alpha: Bool) throws {
        let canvas =
            colors == 0
            ? Self.noiseCanvas(width: 21, height: 17, alpha: alpha)
            : Self.paletteCanvas(width: 21, height: 17, colors: colors, translucent: alpha)
        let png = try PNGEncoder().encode(canvas)
        let file = try PNGInspector(png)
        var expected = ["IHDR"]
        if colors > 0 { expected.append("PLTE") }
        if colors > 0, alpha { expected.append("tRNS") }
        expected += ["IDAT", "IEND"]
        #expect(file.chunkTypes == expected)
        #expect(file.everyCRCMatches)
        #expect(file.trailingBytes == 0)
        #expect(file.header! == [0, 0, 0, 21, 0, 0, 0, 17, UInt8(file.bitDepth), UInt8(file.colorType), 0, 0, 0])
        #expect(file.chunks.last!.payload.isEmpty)
        if colors > 0 {
            #expect(file.chunks[1].payload.count == 3 * colors)
            // tRNS stops at the last translucent entry (they come first).
            if alpha { #expect(file.chunks[2].payload.count < colors && file.chunks[2].payload.last! != 255) }
        }
        let rows = try file.filteredScanlines()
        let rowBytes = rows.count / 17
        // Palette rows: filter none. RGB(A): sub for the first row, up for the others.
        #expect((0..<17).allSatisfy { rows[$0 * rowBytes] == (colors > 0 ? 0 : $0 == 0 ? 1 : 2) })
        // A zlib header (deflate, 32 KiB window) that passes its own check.
        let idat = file.chunks.first { $0.type == "IDAT" }!.payload
        #expect(idat[0] == 0x78 && (UInt16(idat[0]) << 8 | UInt16(idat[1])) % 31 == 0)
    }

    @Test func emptyCanvasIsRefused() {
        #expect(throws: PNGEncodingError.self) { try PNGEncoder().encode(Canvas(width: 0, height: 5)) }
        #expect(throws: PNGEncodingError.self) { try PNGEncoder().encode(Canvas(width: 5, height: 0)) }
    }

    /// The png-writer fuzz target's finding (fuzz/png-writer/seeds/tall-1x33794-palette): a
    /// 1×33,794 canvas of four translucent colours. The writer writes it and libpng reads the
    /// same pixels; Flipbook's reader refuses a side past `maxDimension` (32,767, Chromium's
    /// limit) naming it, and with the limit raised reads the same pixels back.
    @Test func aCanvasTallerThanMaxDimensionIsWrittenAndRefusedByTheReaderNamingTheLimit() throws {
        let canvas = Self.paletteCanvas(width: 1, height: 33_794, colors: 4, translucent: true)
        let png = try PNGEncoder(compressionLevel: 6).encode(canvas)
        #expect(png[25] == 3)  // palette
        #expect(try APNGFrameDecoder.decodeRGBA(png, width: 1, height: 33_794) == canvas.pixels)
        #expect(throws: AnimatedImageError.limitExceeded(.maxDimension, value: 33_794, limit: 32_767)) {
            try AnimatedImage(bytes: png, limits: .default, verification: .structural)
        }
        var limits = DecodeLimits.default
        limits.maxDimension = 33_794
        let image = try AnimatedImage(bytes: png, limits: limits, verification: .full)
        #expect(image.canvasWidth == 1 && image.canvasHeight == 33_794 && image.frameCount == 1)
        #expect(try FrameRenderer(image: image).render(0) == canvas)
    }

    /// Encoders on several threads share the compressor pool: every result equals the one made
    /// alone, at every level.
    @Test func concurrentEncodesMatchSerialOnes() throws {
        let canvases = (0..<6).map { i in
            i % 2 == 0
                ? Self.noiseCanvas(width: 64 + i, height: 48, alpha: i % 4 == 0, seed: UInt64(i))
                : Self.paletteCanvas(width: 50, height: 40 + i, colors: 3 + i * 20, translucent: true)
        }
        let levels = [0, 1, 6, 9]
        let jobs = levels.flatMap { level in canvases.indices.map { (level, $0) } }
        let expected = try jobs.map { try PNGEncoder(compressionLevel: $0.0).encode(canvases[$0.1]) }
        let mismatches = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: jobs.count * 4) { n in
            let (level, index) = jobs[n % jobs.count]
            let png = try? PNGEncoder(compressionLevel: level).encode(canvases[index])
            if png != expected[n % jobs.count] { mismatches.add(1, ordering: .relaxed) }
        }
        #expect(mismatches.load(ordering: .relaxed) == 0)
    }
}
