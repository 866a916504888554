/// The identifier of one request, as the server's request-id header carries it (`X-Request-ID` in
/// Flipbook): the client's own value when it sent an acceptable one (1–128 printable ASCII
/// characters without spaces: it goes into logs), else one the server made (16 hex digits: a
/// random prefix per event loop and a counter, unique across replicas in practice, no system
/// call and no allocation).
///
/// The bytes are read in place — from the request head for an echoed id — so carrying an id
/// through a request costs nothing; ``description`` builds a `String` for logs that want one.
public struct HTTPRequestID: Sendable, Equatable, CustomStringConvertible {
    @usableFromInline
    enum Value: Sendable {
        /// No id (requests made by hand, servers without a request-id header).
        case none
        /// Made by the server: its 16 hex digits, as they are in memory (written once, when made).
        case generated(UInt64, UInt64)
        /// The client's, at `start..<end` of the request head's bytes.
        case echoed([UInt8], start: Int, end: Int)
    }

    @usableFromInline
    let value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// No id.
    public static let none = HTTPRequestID(.none)

    /// An id made from a number (written as 16 lowercase hex digits).
    public init(generated number: UInt64) {
        value = .generated(
            Self.hexDigits(UInt32(truncatingIfNeeded: number >> 32)), Self.hexDigits(UInt32(truncatingIfNeeded: number)))
    }

    /// The 8 lowercase hex digits of `number`, most significant first in memory: each nibble
    /// spread to a byte of its own, then all turned into ASCII at once (no loop, no table).
    static func hexDigits(_ number: UInt32) -> UInt64 {
        var nibbles = UInt64(number)
        nibbles = (nibbles | nibbles << 16) & 0x0000_FFFF_0000_FFFF
        nibbles = (nibbles | nibbles << 8) & 0x00FF_00FF_00FF_00FF
        nibbles = (nibbles | nibbles << 4) & 0x0F0F_0F0F_0F0F_0F0F
        // 1 in each byte whose nibble is 10 or more: those become `a`–`f` (0x27 past `0` + nibble).
        let letters = ((nibbles &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        let ascii = nibbles &+ 0x3030_3030_3030_3030 &+ letters &* 0x27
        // The least significant nibble is in the lowest byte: reversed, the most significant one
        // comes first in (little-endian) memory.
        return UInt64(bigEndian: ascii)
    }

    /// Whether a client's value may be echoed: 1–128 bytes of visible ASCII (`!` … `~`).
    static func isAcceptable(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard (1...128).contains(bytes.count) else { return false }
        for byte in bytes where byte <= 0x20 || byte >= 0x7F { return false }
        return true
    }

    /// The number of bytes of the id (0 for ``none``).
    public var count: Int {
        switch value {
        case .none: return 0
        case .generated: return 16
        case .echoed(_, let start, let end): return end - start
        }
    }

    /// Calls `body` with the id's bytes (ASCII), without allocating. Inlinable, so that a caller
    /// in another module (the access log) gets it specialized rather than through generic calls.
    @inlinable
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch value {
        case .none:
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        case .generated(let high, let low):
            return try Swift.withUnsafeBytes(of: (high, low)) { try body($0) }
        case .echoed(let storage, let start, let end):
            return try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
        }
    }

    /// Appends the id's bytes to `out`.
    public func append(to out: inout [UInt8]) {
        withUnsafeBytes { out.append(contentsOf: $0) }
    }

    /// The id as text (`-` for ``none``).
    public var description: String {
        if case .none = value { return "-" }
        return withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    public static func == (a: HTTPRequestID, b: HTTPRequestID) -> Bool {
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in x.elementsEqual(y) } }
    }
}
