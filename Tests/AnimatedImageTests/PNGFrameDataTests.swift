import CZlib
import Testing

@testable import AnimatedImage

/// A PNG frame's zlib stream is inflated only as far as its rows need: a file whose `IDAT`
/// inflates to far more than the image (a CPU-amplification bomb) costs what the image costs.
@Suite("PNG frame data")
struct PNGFrameDataTests {
    /// Filtered scanlines of a `width`×`height` RGBA image: filter 0, then the pixels.
    static func rows(width: Int, height: Int, pixels: [UInt8]) -> [UInt8] {
        var raw: [UInt8] = []
        for y in 0..<height {
            raw.append(0)
            raw += pixels[y * width * 4..<(y + 1) * width * 4]
        }
        return raw
    }

    /// One zlib stream of `data` followed by `zeros` zero bytes.
    static func zlibStream(_ data: [UInt8], thenZeros zeros: Int) -> [UInt8] {
        var stream = z_stream()
        precondition(deflateInit_(&stream, 9, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        defer { deflateEnd(&stream) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        func feed(_ input: [UInt8], flush: Int32) {
            input.withUnsafeBufferPointer { inBuf in
                stream.next_in = UnsafeMutablePointer(mutating: inBuf.baseAddress)
                stream.avail_in = uInt(inBuf.count)
                repeat {
                    buffer.withUnsafeMutableBufferPointer { outBuf in
                        stream.next_out = outBuf.baseAddress
                        stream.avail_out = uInt(outBuf.count)
                        _ = deflate(&stream, flush)
                        out += outBuf[0..<(outBuf.count - Int(stream.avail_out))]
                    }
                } while stream.avail_out == 0
            }
        }
        feed(data, flush: Z_NO_FLUSH)
        let block = [UInt8](repeating: 0, count: 1 << 20)
        var left = zeros
        while left > 0 {
            let n = min(left, block.count)
            feed(Array(block[0..<n]), flush: Z_NO_FLUSH)
            left -= n
        }
        feed([], flush: Z_FINISH)
        return out
    }

    /// A still PNG with the given header fields (a 256-entry palette for colour type 3) and
    /// `idat` as its one IDAT payload.
    static func stillPNG(
        width: Int, height: Int, depth: UInt8, colorType: UInt8, interlace: UInt8,
        idat: [UInt8]
    ) -> [UInt8] {
        let builder = APNGBuilder(width: width, height: height)
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += builder.chunk("IHDR", builder.be32(width) + builder.be32(height) + [depth, colorType, 0, 0, interlace])
        if colorType == 3 {
            out += builder.chunk("PLTE", (0..<768).map { UInt8($0 % 256) })
        }
        out += builder.chunk("IDAT", idat)
        out += builder.chunk("IEND", [])
        return out
    }

    @Test("an IDAT that inflates to 64 MiB past a 64×64 image decodes, inflating only the image's rows")
    func overlongImageDataIsNotInflated() throws {
        let side = 64
        let pixels = (0..<side * side * 4).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 / 256) }
        let rows = Self.rows(width: side, height: side, pixels: pixels)
        let stream = Self.zlibStream(rows, thenZeros: 64 << 20)
        let png = Self.stillPNG(width: side, height: side, depth: 8, colorType: 6, interlace: 0, idat: stream)
        #expect(png.count < 1 << 20)  // a small file…

        // …whose frame is the image: verification (every frame decoded) and rendering succeed.
        let image = try AnimatedImage(bytes: png)
        #expect(image.frameCount == 1)
        #expect(try FrameRenderer(image: image).render(0).pixels == pixels)

        // The decoder's inflate stops at the rows: 64 × (1 + 256) bytes, from a fraction of the stream.
        guard case .png(let ranges) = image.index.frames[0].source, case .png(let header) = image.index.header else {
            Issue.record("not a PNG frame")
            return
        }
        let needed = PNGFrameData.scanlineByteCount(width: side, height: side, header: header)
        #expect(needed == side * (1 + side * 4))
        let decoder = APNGFrameDecoder(bytes: image.bytes, header: header)
        try image.bytes.withUnsafeBufferPointer { input in
            let frameStream = try decoder.stream(width: side, height: side, data: ranges, input: input)
            // What libpng is handed holds the rows and block framing, not the surplus…
            let standalone = try frameStream.readToEnd()
            #expect(standalone.count < needed + 256)
            #expect(try APNGFrameDecoder.decodeRGBA(standalone, width: side, height: side) == pixels)
            // …for which a tenth of the file's stream was read and only the rows were inflated.
            #expect(frameStream.counts.inflated == needed)
            #expect(frameStream.counts.consumed < stream.count / 10)
        }
        // Decoding reads the same PNG piece by piece, as libpng asks for it.
        let piecewise = try image.bytes.withUnsafeBufferPointer { input in
            try APNGFrameDecoder.decodeRGBA(
                pulling: decoder.stream(width: side, height: side, data: ranges, input: input),
                width: side, height: side)
        }
        #expect(piecewise == pixels)
    }

    /// (colour type, bit depth, interlace, width, height)
    static let layouts: [(UInt8, UInt8, UInt8, Int, Int)] = [
        (0, 1, 0, 13, 7), (0, 2, 1, 13, 7), (0, 4, 0, 3, 5), (0, 8, 1, 1, 1), (0, 16, 1, 33, 2),
        (2, 8, 0, 8, 8), (2, 16, 1, 9, 9), (3, 1, 1, 5, 3), (3, 2, 0, 7, 4), (3, 4, 1, 2, 9),
        (3, 8, 1, 70, 3), (4, 8, 0, 6, 6), (4, 16, 1, 3, 17), (6, 8, 1, 8, 8), (6, 16, 0, 4, 4),
        (6, 8, 1, 1, 300), (6, 8, 0, 300, 1), (0, 8, 1, 4, 4),
    ]

    @Test(
        "scanline byte counts are what libpng reads: exactly enough decodes, one byte less does not",
        arguments: layouts.indices)
    func scanlineCountsMatchLibpng(_ i: Int) throws {
        let (colorType, depth, interlace, width, height) = Self.layouts[i]
        let header = try PNGHeader(
            bytes: ImageBytes(
                Self.stillPNG(
                    width: width, height: height, depth: depth,
                    colorType: colorType, interlace: interlace,
                    idat: [])),
            ihdr: 16..<29)
        let needed = PNGFrameData.scanlineByteCount(width: width, height: height, header: header)
        func decodes(_ count: Int, surplus: Int = 0) -> Bool {
            let stream = Self.zlibStream([UInt8](repeating: 0, count: count), thenZeros: surplus)
            let png = Self.stillPNG(
                width: width, height: height, depth: depth, colorType: colorType,
                interlace: interlace, idat: stream)
            guard let image = try? AnimatedImage(bytes: png) else { return false }
            return (try? FrameRenderer(image: image).render(0)) != nil
        }
        #expect(decodes(needed), "\(Self.layouts[i]): \(needed) bytes")
        #expect(!decodes(needed - 1), "\(Self.layouts[i]): \(needed - 1) bytes")
        #expect(decodes(needed, surplus: 100_000), "\(Self.layouts[i]): surplus")
    }

    @Test("damaged image data is a frame error, not a crash: a bad zlib header, a corrupt stream, none at all")
    func damagedStreams() throws {
        let side = 16
        let rows = Self.rows(width: side, height: side, pixels: solid(9, 8, 7, 255, count: side * side))
        var stream = Self.zlibStream(rows, thenZeros: 0)
        var badHeader = stream
        badHeader[0] = 0x79  // not deflate
        var corrupt = stream
        for k in 4..<min(40, corrupt.count) { corrupt[k] ^= 0xA5 }
        stream.removeLast(stream.count / 2)  // cut short: rows missing
        for idat in [badHeader, corrupt, stream, []] {
            let png = Self.stillPNG(width: side, height: side, depth: 8, colorType: 6, interlace: 0, idat: idat)
            #expect(throws: AnimatedImageError.self) { try AnimatedImage(bytes: png) }
        }
    }
}
