import CZlib

/// Writes PNG image data in any layout PNG allows — every colour type and bit depth, Adam7
/// interlaced or not, with the five row filters in turn — from raw samples, for tests that
/// check the decoder against values worked out by hand.
struct PNGSampleWriter {
    /// 0 gray, 2 RGB, 3 palette, 4 gray + alpha, 6 RGBA.
    var colorType: UInt8
    var bitDepth: Int
    var interlaced: Bool

    var channels: Int { [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(colorType)]! }
    var bitsPerPixel: Int { channels * bitDepth }

    /// Adam7's seven passes: first column, first row, column step, row step.
    static let adam7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]

    /// The zlib stream of a `width`×`height` image whose pixel (x, y) has the samples
    /// `samples[(y * width + x) * channels ..< + channels]` (each below 2^bitDepth).
    func imageData(_ samples: [Int], width: Int, height: Int) -> [UInt8] {
        precondition(samples.count == width * height * channels)
        var raw: [UInt8] = []
        var filter = 0
        let passes = interlaced ? Self.adam7 : [(0, 0, 1, 1)]
        for (x0, y0, dx, dy) in passes {
            let columns = Array(stride(from: x0, to: width, by: dx))
            let rows = Array(stride(from: y0, to: height, by: dy))
            guard !columns.isEmpty, !rows.isEmpty else { continue }  // an empty pass has no rows at all
            var previous = [UInt8](repeating: 0, count: (columns.count * bitsPerPixel + 7) / 8)
            for y in rows {
                let line = pack(columns.map { x in Array(samples[(y * width + x) * channels..<(y * width + x + 1) * channels]) })
                raw.append(UInt8(filter))
                raw += Self.filtered(line, previous: previous, filter: filter, bytesPerPixel: max(1, bitsPerPixel / 8))
                previous = line
                filter = (filter + 1) % 5
            }
        }
        var size = compressBound(uLong(raw.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        _ = compress2(&out, &size, raw, uLong(raw.count), 6)
        return Array(out[0..<Int(size)])
    }

    /// One row of pixels as bytes: samples big-endian at 16 bits, packed from the high bit below 8.
    private func pack(_ pixels: [[Int]]) -> [UInt8] {
        var bytes: [UInt8] = []
        var accumulator = 0
        var bits = 0
        for sample in pixels.joined() {
            if bitDepth == 16 {
                bytes += [UInt8(sample >> 8), UInt8(sample & 0xFF)]
            } else if bitDepth == 8 {
                bytes.append(UInt8(sample))
            } else {
                accumulator = accumulator << bitDepth | sample
                bits += bitDepth
                if bits == 8 { bytes.append(UInt8(accumulator)); accumulator = 0; bits = 0 }
            }
        }
        if bits > 0 { bytes.append(UInt8(accumulator << (8 - bits))) }
        return bytes
    }

    static func filtered(_ line: [UInt8], previous: [UInt8], filter: Int, bytesPerPixel bpp: Int) -> [UInt8] {
        line.indices.map { i in
            let a = i >= bpp ? Int(line[i - bpp]) : 0
            let b = Int(previous[i])
            let c = i >= bpp ? Int(previous[i - bpp]) : 0
            let predictor: Int
            switch filter {
            case 1: predictor = a
            case 2: predictor = b
            case 3: predictor = (a + b) / 2
            case 4:
                let p = a + b - c
                let pa = abs(p - a)
                let pb = abs(p - b)
                let pc = abs(p - c)
                predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c
            default: predictor = 0
            }
            return UInt8(truncatingIfNeeded: Int(line[i]) - predictor)
        }
    }
}

/// An APNG (or still PNG) in any layout, for ``PNGSampleWriter``'s tests: one IHDR, optional
/// PLTE/tRNS and colour chunks, frames as fcTL + IDAT/fdAT.
struct LayoutAPNG {
    struct Frame {
        var x = 0, y = 0, width: Int, height: Int
        var samples: [Int]
        var delayNumerator = 1, delayDenominator = 10
        var dispose: UInt8 = 0, blend: UInt8 = 0
    }

    var writer: PNGSampleWriter
    var width: Int
    var height: Int
    var palette: [UInt8] = []
    var transparency: [UInt8] = []
    /// Ancillary chunks written before PLTE (type and payload), e.g. gAMA or iCCP.
    var extraChunks: [(String, [UInt8])] = []
    var frames: [Frame] = []
    /// False: a still PNG of `frames[0]` (which must cover the canvas).
    var animated = true

    func build() -> [UInt8] {
        let b = APNGBuilder(width: width, height: height)
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += b.chunk(
            "IHDR",
            b.be32(width) + b.be32(height)
                + [UInt8(writer.bitDepth), writer.colorType, 0, 0, writer.interlaced ? 1 : 0])
        for (type, payload) in extraChunks { out += b.chunk(type, payload) }
        if animated { out += b.chunk("acTL", b.be32(frames.count) + b.be32(0)) }
        if !palette.isEmpty { out += b.chunk("PLTE", palette) }
        if !transparency.isEmpty { out += b.chunk("tRNS", transparency) }
        var sequence = 0
        for (i, frame) in frames.enumerated() {
            let data = writer.imageData(frame.samples, width: frame.width, height: frame.height)
            if animated {
                out += b.chunk(
                    "fcTL",
                    b.be32(sequence) + b.be32(frame.width) + b.be32(frame.height) + b.be32(frame.x)
                        + b.be32(frame.y) + b.be16(frame.delayNumerator) + b.be16(frame.delayDenominator)
                        + [frame.dispose, frame.blend])
                sequence += 1
            }
            if i == 0 {
                out += b.chunk("IDAT", data)
            } else {
                out += b.chunk("fdAT", b.be32(sequence) + data)
                sequence += 1
            }
        }
        out += b.chunk("IEND", [])
        return out
    }
}
