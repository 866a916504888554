import CDeflate

/// Writes PNG chunks into one array laid out in advance (its exact size known beforehand): each
/// chunk framed as the PNG specification says (section 5.3) — 4-byte big-endian payload length,
/// 4-byte type, payload, and the CRC-32 of type and payload (libdeflate's). Payloads are copied
/// in (``append(_:_:)-(StaticString,UnsafeRawBufferPointer)``) or written in place
/// (``appendChunk(_:length:_:)``).
///
/// The one PNG chunk writer of Flipbook: served frames (``PNGFileWriter``) and the standalone
/// PNGs APNG frames are rebuilt into for libpng (``APNGFrameDecoder``, ``PNGFrameData``) both go
/// through it.
///
/// ```swift
/// let png = PNGChunkWriter.file(byteCount: PNGChunkWriter.fileSize(payloads: [13, idat.count, 0])) { w in
///     w.appendHeader(width: 1, height: 1, bitDepth: 8, colorType: 6)
///     w.append("IDAT", idat)
///     w.appendEnd()
/// }
/// ```
struct PNGChunkWriter {
    static let signature = PNGSignature.bytes
    /// The largest payload a chunk may have (2³¹ − 1).
    static let maxChunkLength = Int(Int32.max)
    /// Length, type and CRC around each payload.
    static let chunkOverhead = 12
    static let headerLength = 13

    private let output: UnsafeMutableRawBufferPointer
    private(set) var offset = 0

    private init(_ output: UnsafeMutableRawBufferPointer) {
        self.output = output
    }

    /// The size of a PNG file (signature included) of chunks with these payload sizes.
    static func fileSize(payloads: [Int]) -> Int {
        payloads.reduce(signature.count) { $0 + chunkOverhead + $1 }
    }

    /// A PNG file of exactly `byteCount` bytes: the signature, then what `write` appends, which
    /// must fill it exactly.
    static func file(byteCount: Int, _ write: (inout PNGChunkWriter) throws -> Void) rethrows -> [UInt8] {
        try layout(byteCount: byteCount) { writer in
            writer.copy(signature)
            try write(&writer)
        }
    }

    /// `byteCount` bytes, all of them written by `write` (which starts with nothing, not even
    /// the signature: for callers that copy in a head of their own).
    static func layout(byteCount: Int, _ write: (inout PNGChunkWriter) throws -> Void) rethrows -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: byteCount) { buffer, initializedCount in
            var writer = PNGChunkWriter(UnsafeMutableRawBufferPointer(buffer))
            try write(&writer)
            precondition(writer.offset == byteCount, "PNG laid out as \(writer.offset) bytes, sized for \(byteCount)")
            initializedCount = byteCount
        }
    }

    // MARK: Chunks

    /// A chunk of `length` payload bytes, which `body` writes in place (with ``byte(_:)``,
    /// ``big32(_:)``, ``little16(_:)``, ``copy(_:)-(UnsafeRawBufferPointer)`` or ``reserve(_:)``).
    mutating func appendChunk(
        _ type: StaticString, length: Int,
        _ body: (inout PNGChunkWriter) throws -> Void
    ) rethrows {
        precondition(type.utf8CodeUnitCount == 4)
        try appendChunk(type: PNGChunk.code(type), length: length, body)
    }

    mutating func append(_ type: StaticString, _ payload: UnsafeRawBufferPointer) {
        appendChunk(type, length: payload.count) { $0.copy(payload) }
    }

    mutating func append(_ type: StaticString, _ payload: [UInt8]) {
        payload.withUnsafeBytes { append(type, $0) }
    }

    /// IHDR; compression method 0 (deflate) and filter method 0 always.
    mutating func appendHeader(width: Int, height: Int, bitDepth: UInt8, colorType: UInt8, interlace: UInt8 = 0) {
        appendChunk("IHDR", length: Self.headerLength) { body in
            body.big32(UInt32(width))
            body.big32(UInt32(height))
            for field in [bitDepth, colorType, 0, 0, interlace] { body.byte(field) }
        }
    }

    /// The colour-space chunks, which belong after IHDR and before PLTE and the image data.
    mutating func append(_ colorSpace: ColorSpaceChunks) {
        for chunk in colorSpace.chunks {
            appendChunk(type: PNGChunk.code(chunk.type), length: chunk.payload.count) { $0.copy(chunk.payload) }
        }
    }

    /// The payload sizes of ``append(_:)-(ColorSpaceChunks)``.
    static func payloadSizes(of colorSpace: ColorSpaceChunks) -> [Int] { colorSpace.chunks.map(\.payload.count) }

    /// A zlib stream as IDAT chunks (more than one only past 2³¹ − 1 bytes).
    mutating func appendImageData(_ stream: UnsafeRawBufferPointer) {
        var start = 0
        repeat {
            let end = min(stream.count, start + Self.maxChunkLength)
            append("IDAT", UnsafeRawBufferPointer(rebasing: stream[start..<end]))
            start = end
        } while start < stream.count
    }

    /// The payload sizes of ``appendImageData(_:)`` for a stream of `count` bytes.
    static func imageDataPayloadSizes(_ count: Int) -> [Int] {
        let chunks = max(1, (count + maxChunkLength - 1) / maxChunkLength)
        return (0..<chunks).map { min(maxChunkLength, count - $0 * maxChunkLength) }
    }

    /// IEND: the file is complete.
    mutating func appendEnd() {
        appendChunk("IEND", length: 0) { _ in }
    }

    /// A chunk whose type is the four bytes of `type`, big-endian.
    private mutating func appendChunk(
        type: UInt32, length: Int,
        _ body: (inout PNGChunkWriter) throws -> Void
    ) rethrows {
        precondition(length <= Self.maxChunkLength, "a PNG chunk of \(length) bytes")
        big32(UInt32(length))
        let typeStart = offset
        big32(type)
        try body(&self)
        precondition(offset == typeStart + 4 + length, "chunk payload is \(offset - typeStart - 4) bytes, announced \(length)")
        big32(libdeflate_crc32(0, output.baseAddress! + typeStart, offset - typeStart))
    }

    // MARK: Bytes

    mutating func copy(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        precondition(offset + bytes.count <= output.count, "PNG chunk overruns its buffer")
        (output.baseAddress! + offset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        offset += bytes.count
    }

    mutating func copy(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { copy($0) }
    }

    mutating func byte(_ value: UInt8) {
        precondition(offset < output.count, "PNG chunk overruns its buffer")
        output[offset] = value
        offset += 1
    }

    mutating func big32(_ value: UInt32) {
        precondition(offset + 4 <= output.count, "PNG chunk overruns its buffer")
        output.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt32.self)
        offset += 4
    }

    mutating func little16(_ value: UInt16) {
        byte(UInt8(value & 0xFF))
        byte(UInt8(value >> 8))
    }

    /// The next `count` bytes, for the caller to fill at once.
    mutating func reserve(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        precondition(offset + count <= output.count, "PNG chunk overruns its buffer")
        defer { offset += count }
        return (output.baseAddress! + offset).assumingMemoryBound(to: UInt8.self)
    }
}
