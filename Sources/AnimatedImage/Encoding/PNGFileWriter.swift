import CDeflate

/// The IHDR fields that vary between Flipbook's PNGs; compression method, filter method and
/// interlace method are always 0 (deflate, adaptive filtering, no interlacing).
struct PNGImageHeader: Equatable {
    var width: Int
    var height: Int
    var bitDepth: UInt8
    /// 2 RGB, 3 palette, 6 RGBA.
    var colorType: UInt8
}

/// Lays out a whole PNG file in one exactly-sized byte array: signature, IHDR, PLTE and tRNS
/// when given, the zlib stream as IDAT, IEND. Each chunk is framed as the PNG spec says
/// (section 5.3): 4-byte big-endian payload length, 4-byte type, payload, and the CRC-32 of
/// type and payload (computed with libdeflate).
enum PNGFileWriter {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// The largest payload a chunk may have (2³¹ − 1). Streams beyond it, which only stored
    /// (level 0) images of over 2 GiB could make, continue in further IDAT chunks.
    static let maxChunkLength = Int(Int32.max)
    /// Length, type and CRC around each payload.
    static let chunkOverhead = 12
    static let headerLength = 13

    /// - Parameters:
    ///   - palette: PLTE payload (RGB triples), empty for no PLTE chunk.
    ///   - transparency: tRNS payload, empty for no tRNS chunk.
    ///   - zlibStream: the compressed filtered scanlines.
    static func file(header: PNGImageHeader, palette: [UInt8], transparency: [UInt8],
                     zlibStream: UnsafeRawBufferPointer) -> [UInt8] {
        let dataChunks = max(1, (zlibStream.count + maxChunkLength - 1) / maxChunkLength)
        var size = signature.count + chunkOverhead + headerLength
        if !palette.isEmpty { size += chunkOverhead + palette.count }
        if !transparency.isEmpty { size += chunkOverhead + transparency.count }
        size += dataChunks * chunkOverhead + zlibStream.count
        size += chunkOverhead  // IEND

        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initializedCount in
            var cursor = ChunkCursor(UnsafeMutableRawBufferPointer(buffer))
            signature.withUnsafeBytes { cursor.append($0) }

            cursor.beginChunk("IHDR", length: headerLength)
            cursor.appendBigEndian(UInt32(header.width))
            cursor.appendBigEndian(UInt32(header.height))
            cursor.append(header.bitDepth)
            cursor.append(header.colorType)
            cursor.append(0)  // compression method: deflate
            cursor.append(0)  // filter method: adaptive, five filter types
            cursor.append(0)  // interlace method: none
            cursor.endChunk()

            for (type, payload) in [("PLTE" as StaticString, palette), ("tRNS", transparency)] where !payload.isEmpty {
                cursor.beginChunk(type, length: payload.count)
                payload.withUnsafeBytes { cursor.append($0) }
                cursor.endChunk()
            }

            var start = 0
            repeat {
                let end = min(zlibStream.count, start + maxChunkLength)
                cursor.beginChunk("IDAT", length: end - start)
                cursor.append(UnsafeRawBufferPointer(rebasing: zlibStream[start..<end]))
                cursor.endChunk()
                start = end
            } while start < zlibStream.count

            cursor.beginChunk("IEND", length: 0)
            cursor.endChunk()
            precondition(cursor.offset == size, "PNG laid out as \(cursor.offset) bytes, sized for \(size)")
            initializedCount = size
        }
    }
}

/// Writes chunks one after another into memory sized beforehand.
private struct ChunkCursor {
    private let output: UnsafeMutableRawBufferPointer
    private(set) var offset = 0
    /// Where the open chunk's type starts, and the payload length it announced.
    private var chunkStart = 0
    private var announcedLength = 0

    init(_ output: UnsafeMutableRawBufferPointer) {
        self.output = output
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        precondition(offset + bytes.count <= output.count, "PNG chunk overruns its buffer")
        (output.baseAddress! + offset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        offset += bytes.count
    }

    mutating func append(_ byte: UInt8) {
        precondition(offset < output.count, "PNG chunk overruns its buffer")
        output[offset] = byte
        offset += 1
    }

    mutating func appendBigEndian(_ value: UInt32) {
        precondition(offset + 4 <= output.count, "PNG chunk overruns its buffer")
        output.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt32.self)
        offset += 4
    }

    mutating func beginChunk(_ type: StaticString, length: Int) {
        precondition(type.utf8CodeUnitCount == 4 && length <= PNGFileWriter.maxChunkLength)
        appendBigEndian(UInt32(length))
        chunkStart = offset
        announcedLength = length
        type.withUTF8Buffer { append(UnsafeRawBufferPointer($0)) }
    }

    /// Appends the CRC-32 of the chunk's type and payload.
    mutating func endChunk() {
        let covered = offset - chunkStart
        precondition(covered == 4 + announcedLength, "chunk payload is \(covered - 4) bytes, announced \(announcedLength)")
        let crc = libdeflate_crc32(0, output.baseAddress! + chunkStart, covered)
        appendBigEndian(crc)
    }
}
