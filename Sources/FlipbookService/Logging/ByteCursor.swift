/// Writes bytes one after another into memory reserved for all of them beforehand: no bounds
/// check, no uniqueness check and no growth per write, as `Array.append` makes. The caller
/// reserves the room (an access-log line: ``AccessLogFormat/maximumLength(of:)``).
struct ByteCursor {
    private let start: UnsafeMutableRawPointer
    /// The number of bytes written so far.
    private(set) var offset = 0

    init(_ start: UnsafeMutableRawPointer) {
        self.start = start
    }

    /// Where the next byte goes.
    var position: UnsafeMutableRawPointer { start + offset }

    /// Counts `count` bytes written at ``position`` by someone else.
    mutating func advance(_ count: Int) {
        offset += count
    }

    @inline(__always)
    mutating func write(_ byte: UInt8) {
        start.storeBytes(of: byte, toByteOffset: offset, as: UInt8.self)
        offset += 1
    }

    @inline(__always)
    mutating func write(_ first: UInt8, _ second: UInt8) {
        start.storeBytes(of: first, toByteOffset: offset, as: UInt8.self)
        start.storeBytes(of: second, toByteOffset: offset + 1, as: UInt8.self)
        offset += 2
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        (start + offset).copyMemory(from: base, byteCount: bytes.count)
        offset += bytes.count
    }

    mutating func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    @inline(__always)
    mutating func write(_ text: StaticString) {
        (start + offset).copyMemory(from: text.utf8Start, byteCount: text.utf8CodeUnitCount)
        offset += text.utf8CodeUnitCount
    }

    /// `value` in decimal (`-` first when negative): the digits counted, then written from the
    /// last into their place.
    mutating func writeDecimal(_ value: Int) {
        if value < 0 { write(0x2D) }
        var rest = value.magnitude
        var digits = 1
        var bound: UInt = 10
        while rest >= bound && digits < 19 {
            digits += 1
            bound &*= 10
        }
        if digits == 19 && rest >= bound { digits = 20 }
        var end = offset + digits
        offset = end
        repeat {
            end -= 1
            start.storeBytes(of: UInt8(truncatingIfNeeded: rest % 10) &+ 0x30, toByteOffset: end, as: UInt8.self)
            rest /= 10
        } while rest > 0
    }
}
