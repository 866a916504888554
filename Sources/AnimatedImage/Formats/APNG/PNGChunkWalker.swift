import CDeflate

/// The 8-byte signature every PNG starts with.
enum PNGSignature {
    static let bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
}

/// One chunk of a PNG: its four-letter type and where its payload lies in the file.
// swift-format-ignore: AlwaysUseLowerCamelCase
struct PNGChunk {
    var type: UInt32
    var data: Range<Int>

    /// A chunk type's four letters as one big-endian number, as they lie in the file.
    static func code(_ name: StaticString) -> UInt32 {
        name.withUTF8Buffer { b in UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3]) }
    }

    static func code(_ name: String) -> UInt32 {
        name.utf8.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    static let IHDR = code("IHDR"), PLTE = code("PLTE"), tRNS = code("tRNS"), IDAT = code("IDAT")
    static let IEND = code("IEND"), acTL = code("acTL"), fcTL = code("fcTL"), fdAT = code("fdAT")
    /// The colour-space chunks (``ColorSpaceChunks``), by code and name.
    static let colorSpaceTypes: [UInt32: String] = Dictionary(
        uniqueKeysWithValues: ColorSpaceChunks.pngTypes.map { (code($0), $0) })
}

/// Walks the chunks of a PNG without looking inside them. Iteration ends at the first chunk
/// whose header or payload (with its CRC) does not fit in the file; `isCutShort` tells, and
/// `cutShortType` is that chunk's type when its 8-byte header did fit.
struct PNGChunkWalker: Sequence, IteratorProtocol {
    private let bytes: ImageBytes
    private var offset = 8
    private(set) var isCutShort = false
    private(set) var cutShortType: UInt32? = nil

    init(_ bytes: ImageBytes) { self.bytes = bytes }

    mutating func next() -> PNGChunk? {
        var reader = ByteReader(bytes, offset: offset)
        guard !reader.isAtEnd else { return nil }
        guard let length = reader.u32be(), let type = reader.u32be() else {
            isCutShort = true
            return nil
        }
        guard length <= Int32.max, reader.remaining >= Int(length) + 4 else {
            isCutShort = true
            cutShortType = type
            return nil
        }
        let start = reader.offset
        offset = start + Int(length) + 4
        return PNGChunk(type: type, data: start..<start + Int(length))
    }

    /// Whether `chunk`'s stored CRC-32 matches its type and payload.
    func crcMatches(_ chunk: PNGChunk) -> Bool {
        let covered = chunk.data.lowerBound - 4..<chunk.data.upperBound
        var reader = ByteReader(bytes, offset: chunk.data.upperBound)
        guard let stored = reader.u32be() else { return false }
        let computed = bytes.withUnsafeBufferPointer(of: covered) { libdeflate_crc32(0, $0.baseAddress, $0.count) }
        return computed == stored
    }

    /// True when an `acTL` chunk comes before the first `IDAT`: the file is an APNG.
    static func hasAnimationControl(_ bytes: ImageBytes) -> Bool {
        for chunk in PNGChunkWalker(bytes) {
            if chunk.type == PNGChunk.acTL { return true }
            if chunk.type == PNGChunk.IDAT { return false }
        }
        return false
    }
}
