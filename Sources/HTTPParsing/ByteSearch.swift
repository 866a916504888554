#if canImport(Glibc)
import Glibc
#endif

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
    /// DEL (0x7F), `"` or a backslash — in `bytes`, or nil. Eight bytes at a time, like
    /// ``firstControlByte(in:)`` (each test's lowest flag is right, so the lowest of all is).
    package static func firstJSONEscape(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let delete = word ^ (ones &* 0x7F)
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let flagged =
                ((word &- ones &* 0x20) & ~word | (delete &- ones) & ~delete | (quote &- ones) & ~quote
                    | (backslash &- ones) & ~backslash) & highBits
            if flagged != 0 { return offset + flagged.trailingZeroBitCount / 8 }
            offset += 8
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte < 0x20 || byte == 0x7F || byte == 0x22 || byte == 0x5C { return offset }
            offset += 1
        }
        return nil
    }

    /// The offset of the first control byte (below 0x20) or DEL (0x7F) in `bytes`, or nil.
    package static func firstControlByte(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while offset + 8 <= bytes.count {
            // The first byte in the lowest bits, whatever the machine's byte order.
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let delete = word ^ (ones &* 0x7F)
            // A high bit where a byte is below 0x20 or is DEL; the lowest one is always right (a
            // borrow only carries up from a byte that is itself flagged).
            let flagged = ((word &- ones &* 0x20) & ~word | (delete &- ones) & ~delete) & highBits
            if flagged != 0 { return offset + flagged.trailingZeroBitCount / 8 }
            offset += 8
        }
        while offset < bytes.count {
            if bytes[offset] < 0x20 || bytes[offset] == 0x7F { return offset }
            offset += 1
        }
        return nil
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
