import Glibc

/// Searches of request bytes that do not go byte by byte: the request target is scanned several
/// times per request (the parser, the target's split, the router), and a loop over single bytes
/// costs five to ten instructions a byte. Finding a byte is the C library's vectorised `memchr`;
/// counting and classifying read eight bytes at a time (bit tricks on a 64-bit word).
package enum ByteSearch {
    /// The offset in `bytes` of the first `byte` in `range` (all of `bytes` when nil), or nil.
    @inline(__always)
    package static func firstOffset(
        of byte: UInt8, in bytes: UnsafeRawBufferPointer, range: Range<Int>? = nil
    ) -> Int? {
        let range = range ?? 0..<bytes.count
        guard !range.isEmpty, let base = bytes.baseAddress else { return nil }
        guard let found = memchr(base + range.lowerBound, Int32(byte), range.count) else { return nil }
        return UnsafeRawPointer(found) - base
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080
    private static let lowBits: UInt64 = 0x7F7F_7F7F_7F7F_7F7F

    /// How many times `byte` occurs in `bytes`.
    package static func count(of byte: UInt8, in bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let pattern = ones &* UInt64(byte)
        var count = 0
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = base.loadUnaligned(fromByteOffset: offset, as: UInt64.self) ^ pattern
            // The high bit of exactly each byte that is zero (no carries between bytes), moved
            // to the low bit and summed into the top byte by the multiplication.
            let zeros = ~(((word & lowBits) &+ lowBits) | word | lowBits)
            count &+= Int(truncatingIfNeeded: ((zeros >> 7) &* ones) >> 56)
            offset += 8
        }
        while offset < bytes.count {
            if bytes[offset] == byte { count &+= 1 }
            offset += 1
        }
        return count
    }

    /// The offset of the first byte a JSON string must escape — a control byte (below 0x20),
    /// DEL (0x7F), `"` or a backslash — in `bytes`, or nil.
    package static func firstJSONEscape(in bytes: UnsafeRawBufferPointer) -> Int? {
        firstFlagged(
            in: bytes, flags: { controlFlags($0) | equalFlags($0, 0x22) | equalFlags($0, 0x5C) },
            isFlagged: { $0 < 0x20 || $0 == 0x7F || $0 == 0x22 || $0 == 0x5C })
    }

    /// The offset of the first control byte (below 0x20) or DEL (0x7F) in `bytes`, or nil.
    package static func firstControlByte(in bytes: UnsafeRawBufferPointer) -> Int? {
        firstFlagged(in: bytes, flags: controlFlags, isFlagged: { $0 < 0x20 || $0 == 0x7F })
    }

    /// The offset of the first byte of `bytes` that `isFlagged`, eight bytes at a time: `flags`
    /// sets a high bit in (at least) the lowest flagged byte of a word, and none when no byte is.
    @inline(__always)
    private static func firstFlagged(
        in bytes: UnsafeRawBufferPointer, flags: (UInt64) -> UInt64, isFlagged: (UInt8) -> Bool
    ) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while offset + 8 <= bytes.count {
            // The first byte in the lowest bits, whatever the machine's byte order.
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let flagged = flags(word) & highBits
            if flagged != 0 { return offset + flagged.trailingZeroBitCount / 8 }
            offset += 8
        }
        while offset < bytes.count {
            if isFlagged(bytes[offset]) { return offset }
            offset += 1
        }
        return nil
    }

    /// A high bit where a byte of `word` is below 0x20 or is DEL; the lowest one is always right
    /// (a borrow only carries up from a byte that is itself flagged), higher ones may be wrong.
    @inline(__always)
    private static func controlFlags(_ word: UInt64) -> UInt64 {
        let delete = word ^ (ones &* 0x7F)
        return (word &- ones &* 0x20) & ~word | (delete &- ones) & ~delete
    }

    /// A high bit where a byte of `word` is `byte`, rightly for the lowest one (as above).
    @inline(__always)
    private static func equalFlags(_ word: UInt64, _ byte: UInt8) -> UInt64 {
        let difference = word ^ (ones &* UInt64(byte))
        return (difference &- ones) & ~difference
    }

    /// Whether any byte of `bytes` is outside visible ASCII (`!` to `~`, 0x21–0x7E): a space, a
    /// control byte, DEL or a byte of 0x80 and above.
    package static func containsNonVisibleASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            // A high bit where a byte is below 0x21, or at or above 0x7F (a borrow or carry only
            // crosses into the next byte from a byte that is itself outside).
            let below = (word &- ones &* 0x21) & ~word & highBits
            let above = ((word &+ ones) | word) & highBits
            if below | above != 0 { return true }
            offset += 8
        }
        while offset < bytes.count {
            if bytes[offset] &- 0x21 > 0x5D { return true }
            offset += 1
        }
        return false
    }
}
