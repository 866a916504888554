/// Reading the ISO-BMFF boxes (ISO/IEC 14496-12) of a file libavif wrote, to patch it: each
/// box's type, whole range and payload, and big-endian fields read and written in place.
enum ISOBoxes {
    /// One box: its four-character type, its bytes (header included) and its payload.
    struct Box {
        var type: String
        var range: Range<Int>
        var payload: Range<Int>
    }

    /// The boxes that fill `range` of `bytes`, in order; nil when they do not (a size past the
    /// end, or smaller than its header). A size of 0 runs to the end of `range`.
    static func children(_ bytes: [UInt8], _ range: Range<Int>) -> [Box]? {
        var boxes: [Box] = []
        var at = range.lowerBound
        while at < range.upperBound {
            guard at + 8 <= range.upperBound else { return nil }
            var size = Int(read(bytes, at, 4))
            var header = 8
            if size == 1 {
                guard at + 16 <= range.upperBound else { return nil }
                size = Int(clamping: read(bytes, at + 8, 8))
                header = 16
            } else if size == 0 {
                size = range.upperBound - at
            }
            guard size >= header, size <= range.upperBound - at else { return nil }
            boxes.append(
                Box(
                    type: String(decoding: bytes[at + 4..<at + 8], as: UTF8.self), range: at..<at + size,
                    payload: at + header..<at + size))
            at += size
        }
        return boxes
    }

    /// The first child of type `type` in `range`, if the range holds boxes and one is.
    static func child(_ type: String, _ bytes: [UInt8], _ range: Range<Int>) -> Box? {
        children(bytes, range)?.first { $0.type == type }
    }

    /// The big-endian unsigned integer of `width` bytes (0 to 8) at `at`.
    static func read(_ bytes: [UInt8], _ at: Int, _ width: Int) -> UInt64 {
        bytes[at..<at + width].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Writes `value` as a big-endian unsigned integer of `width` bytes at `at`.
    static func write(_ bytes: inout [UInt8], _ at: Int, _ width: Int, _ value: UInt64) {
        for index in 0..<width { bytes[at + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(width - 1 - index))) }
    }
}
