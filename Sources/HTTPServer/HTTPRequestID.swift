/// The identifier of one request, as the server's request-id header carries it (`X-Request-ID` in
/// Flipbook): the client's own value when it sent an acceptable one (1–128 printable ASCII
/// characters without spaces: it goes into logs), else one the server made (16 hex digits: a
/// random prefix per event loop and a counter, unique across replicas in practice, no system
/// call and no allocation).
///
/// The bytes are read in place — from the request head for an echoed id — so carrying an id
/// through a request costs nothing; ``description`` builds a `String` for logs that want one.
public struct HTTPRequestID: Sendable, Equatable, CustomStringConvertible {
    enum Value: Sendable {
        /// No id (requests made by hand, servers without a request-id header).
        case none
        /// Made by the server.
        case generated(UInt64)
        /// The client's, at `start..<end` of the request head's bytes.
        case echoed([UInt8], start: Int, end: Int)
    }

    let value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// No id.
    public static let none = HTTPRequestID(.none)

    /// An id made from a number (written as 16 lowercase hex digits).
    public init(generated number: UInt64) {
        value = .generated(number)
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

    /// Calls `body` with the id's bytes (ASCII), without allocating.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch value {
        case .none:
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        case .generated(let number):
            var digits: (UInt64, UInt64) = (0, 0)
            return try Swift.withUnsafeMutableBytes(of: &digits) { raw in
                for position in 0..<16 {
                    let nibble = UInt8(truncatingIfNeeded: number >> UInt64(60 - 4 * position)) & 0x0F
                    raw[position] = nibble < 10 ? 0x30 + nibble : 0x57 + nibble
                }
                return try body(UnsafeRawBufferPointer(rebasing: raw[0..<16]))
            }
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
