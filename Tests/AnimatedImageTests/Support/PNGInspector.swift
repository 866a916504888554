import CZlib

/// Reads a PNG file chunk by chunk with no help from libpng: checks each CRC with zlib's crc32,
/// inflates the IDAT data with zlib and undoes the row filters, so the tests can see the file's
/// structure (chunk order, filter bytes) and check pixels by a second, independent route.
/// Handles what Flipbook writes: 8-bit RGB/RGBA and 1/2/4/8-bit palette images, not interlaced.
struct PNGInspector {
    struct Chunk {
        var type: String
        var payload: [UInt8]
        var crcMatches: Bool
    }

    enum InspectError: Error {
        case badSignature, truncated, noHeader
        case inflateFailed(Int32)
        case badFilter(UInt8)
    }

    let chunks: [Chunk]
    /// Bytes after the IEND chunk (should be none).
    let trailingBytes: Int

    init(_ bytes: [UInt8]) throws {
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { throw InspectError.badSignature }
        var chunks: [Chunk] = []
        var offset = 8
        while offset < bytes.count, chunks.last?.type != "IEND" {
            guard offset + 12 <= bytes.count else { throw InspectError.truncated }
            let length = Int(Self.bigEndian(bytes, at: offset))
            guard offset + 12 + length <= bytes.count else { throw InspectError.truncated }
            let body = Array(bytes[offset + 4..<offset + 8 + length])
            let crc = body.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
            chunks.append(
                Chunk(
                    type: String(decoding: body[0..<4], as: UTF8.self), payload: Array(body[4...]),
                    crcMatches: crc == Self.bigEndian(bytes, at: offset + 8 + length)))
            offset += 12 + length
        }
        self.chunks = chunks
        trailingBytes = bytes.count - offset
    }

    var chunkTypes: [String] { chunks.map(\.type) }
    var everyCRCMatches: Bool { chunks.allSatisfy(\.crcMatches) }
    var header: [UInt8]? { chunks.first { $0.type == "IHDR" }?.payload }
    var width: Int { Int(Self.bigEndian(header ?? [], at: 0)) }
    var height: Int { Int(Self.bigEndian(header ?? [], at: 4)) }
    var bitDepth: Int { Int(header?[8] ?? 0) }
    var colorType: Int { Int(header?[9] ?? 0) }

    /// The inflated IDAT data: each row's filter byte followed by its filtered samples.
    func filteredScanlines() throws -> [UInt8] {
        let stream = chunks.filter { $0.type == "IDAT" }.flatMap(\.payload)
        let bitsPerPixel = bitDepth * (colorType == 6 ? 4 : colorType == 2 ? 3 : 1)
        var size = uLong(height * (1 + (width * bitsPerPixel + 7) / 8))
        var out = [UInt8](repeating: 0, count: Int(size))
        let status = uncompress(&out, &size, stream, uLong(stream.count))
        guard status == Z_OK, Int(size) == out.count else { throw InspectError.inflateFailed(status) }
        return out
    }

    /// The image as 8-bit RGBA, palette entries without a tRNS value opaque.
    func rgba() throws -> [UInt8] {
        guard header != nil else { throw InspectError.noHeader }
        let channels = colorType == 6 ? 4 : colorType == 2 ? 3 : 1
        let bitsPerPixel = bitDepth * channels
        let rowBytes = (width * bitsPerPixel + 7) / 8
        let step = max(1, bitsPerPixel / 8)
        let filtered = try filteredScanlines()
        var previous = [UInt8](repeating: 0, count: rowBytes)
        var rows: [UInt8] = []
        for y in 0..<height {
            var row = Array(filtered[y * (rowBytes + 1) + 1..<(y + 1) * (rowBytes + 1)])
            let filter = filtered[y * (rowBytes + 1)]
            for i in 0..<rowBytes {
                let left = i >= step ? Int(row[i - step]) : 0
                let up = Int(previous[i])
                let upLeft = i >= step ? Int(previous[i - step]) : 0
                let predictor: Int
                switch filter {
                case 0: predictor = 0
                case 1: predictor = left
                case 2: predictor = up
                case 3: predictor = (left + up) / 2
                case 4:
                    let p = left + up - upLeft
                    let (pa, pb, pc) = (abs(p - left), abs(p - up), abs(p - upLeft))
                    predictor = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft
                default: throw InspectError.badFilter(filter)
                }
                row[i] = row[i] &+ UInt8(truncatingIfNeeded: predictor)
            }
            rows += row
            previous = row
        }
        let palette = chunks.first { $0.type == "PLTE" }?.payload ?? []
        let alphas = chunks.first { $0.type == "tRNS" }?.payload ?? []
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 4)
        for y in 0..<height {
            let row = rows[y * rowBytes..<(y + 1) * rowBytes]
            for x in 0..<width {
                switch colorType {
                case 6: pixels += row[row.startIndex + x * 4..<row.startIndex + x * 4 + 4]
                case 2: pixels += row[row.startIndex + x * 3..<row.startIndex + x * 3 + 3] + [255]
                default:
                    let bit = x * bitDepth
                    let byte = row[row.startIndex + bit / 8]
                    let index = Int(byte >> (8 - bitDepth - bit % 8)) & ((1 << bitDepth) - 1)
                    pixels += palette[index * 3..<index * 3 + 3] + [index < alphas.count ? alphas[index] : 255]
                }
            }
        }
        return pixels
    }

    static func bigEndian(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        guard offset + 4 <= bytes.count else { return 0 }
        return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
