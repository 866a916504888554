/// A bounds-checked cursor over a file's bytes, or over one range of them. Every read either
/// succeeds or returns nil; nothing here can read out of bounds, whatever the input.
struct ByteReader {
    let bytes: ImageBytes
    /// Where reading stops (the end of the file, or of the range being read).
    let end: Int
    private(set) var offset: Int

    init(_ bytes: ImageBytes, offset: Int = 0) {
        self.bytes = bytes
        self.end = bytes.count
        self.offset = offset
    }

    /// A reader of `range` only (which must lie within `bytes`), starting at its first byte.
    init(_ bytes: ImageBytes, range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "ByteReader range out of bounds")
        self.bytes = bytes
        self.end = range.upperBound
        self.offset = range.lowerBound
    }

    var remaining: Int { max(0, end - offset) }
    var isAtEnd: Bool { offset >= end }

    mutating func u8() -> UInt8? {
        guard offset < end else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16le() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    mutating func u32be() -> UInt32? {
        guard remaining >= 4 else { return nil }
        defer { offset += 4 }
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
            | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    mutating func u16be() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    /// Advances by `count` bytes; false (and no move) when fewer remain.
    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, remaining >= count else { return false }
        offset += count
        return true
    }

    /// The range of the next `count` bytes, or nil when fewer remain.
    mutating func take(_ count: Int) -> Range<Int>? {
        guard count >= 0, remaining >= count else { return nil }
        defer { offset += count }
        return offset..<offset + count
    }
}
