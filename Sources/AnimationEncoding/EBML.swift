/// Writes EBML (RFC 8794), the binary format of Matroska and WebM: each element is its ID, its
/// payload's size as a variable-length integer, then the payload. IDs are written as they are
/// numbered (their length marker included), sizes in the fewest bytes that hold them, unsigned
/// integers in the fewest bytes too unless a fixed width is asked for (a position written
/// before the positions are known keeps its size).
enum EBML {
    /// An element of `id` holding `payload` (other elements, or raw bytes).
    static func element(_ id: UInt32, _ payload: [UInt8]) -> [UInt8] {
        idBytes(id) + size(payload.count) + payload
    }

    /// A master element of `id` holding `children`, in order.
    static func master(_ id: UInt32, _ children: [[UInt8]]) -> [UInt8] {
        element(id, Array(children.joined()))
    }

    /// An unsigned integer element, in the fewest bytes (at least one), or `width` bytes.
    static func uint(_ id: UInt32, _ value: UInt64, width: Int? = nil) -> [UInt8] {
        let count = width ?? max(1, (64 - value.leadingZeroBitCount + 7) / 8)
        return element(id, bigEndian(value, count: count))
    }

    /// A signed integer element, in the fewest bytes that hold it in two's complement.
    static func int(_ id: UInt32, _ value: Int64) -> [UInt8] {
        var count = 1
        while count < 8 && !(-(Int64(1) << (8 * count - 1))..<(Int64(1) << (8 * count - 1))).contains(value) { count += 1 }
        return element(id, bigEndian(UInt64(bitPattern: value), count: count))
    }

    /// A 64-bit IEEE 754 float element.
    static func float(_ id: UInt32, _ value: Double) -> [UInt8] {
        element(id, bigEndian(value.bitPattern, count: 8))
    }

    /// A string element (ASCII or UTF-8), without a terminator.
    static func string(_ id: UInt32, _ value: String) -> [UInt8] {
        element(id, Array(value.utf8))
    }

    /// The bytes of element ID `id` (1 to 4 of them: its length marker is part of it).
    static func idBytes(_ id: UInt32) -> [UInt8] {
        let count = max(1, (32 - id.leadingZeroBitCount + 7) / 8)
        return bigEndian(UInt64(id), count: count)
    }

    /// `value` as a variable-length size: the fewest bytes whose 7 × n bits hold it without
    /// being all ones (which means "unknown size"); 8 bytes at most.
    static func size(_ value: Int) -> [UInt8] {
        var count = 1
        while count < 8 && UInt64(value) >= (UInt64(1) << (7 * count)) - 1 { count += 1 }
        return vint(UInt64(value), count: count)
    }

    /// `value` as a variable-length integer of exactly `count` bytes (its marker bit set).
    static func vint(_ value: UInt64, count: Int) -> [UInt8] {
        var bytes = bigEndian(value, count: count)
        bytes[0] |= UInt8(0x80 >> (count - 1))
        return bytes
    }

    /// The low `count` bytes of `value`, most significant first.
    static func bigEndian(_ value: UInt64, count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(count - 1 - $0))) }
    }
}
