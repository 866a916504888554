/// An IPv4 or IPv6 address as numbers, parsed without the C library so that the rules that judge
/// a source URL's host and the fuzz target see exactly the same code.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// An IPv4 address, most significant byte first (`127.0.0.1` is `0x7f00_0001`).
    case v4(UInt32)
    /// An IPv6 address as its two 64-bit halves, most significant first.
    case v6(high: UInt64, low: UInt64)

    /// The address from its 16 bytes (network order).
    public init(ipv6 bytes: [UInt8]) {
        precondition(bytes.count == 16)
        var high: UInt64 = 0
        var low: UInt64 = 0
        for i in 0..<8 { high = high << 8 | UInt64(bytes[i]) }
        for i in 8..<16 { low = low << 8 | UInt64(bytes[i]) }
        self = .v6(high: high, low: low)
    }

    /// The address from 4 bytes (network order).
    public init(ipv4 bytes: [UInt8]) {
        precondition(bytes.count == 4)
        self = .v4(bytes.reduce(0) { $0 << 8 | UInt32($1) })
    }

    /// An address literal: dotted-quad IPv4 only (`127.0.0.1`), or IPv6 (`::1`, with or without
    /// brackets). The numeric forms a URL host may take (`2130706433`, `0x7f.1`) are
    /// ``IPv4Literal``'s.
    public init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let v6 = IPv6Literal.parse(text) {
            self = v6
        } else if let v4 = IPv4Literal.parseDottedQuad(text) {
            self = .v4(v4)
        } else {
            return nil
        }
    }

    /// The bytes, network order (4 or 16).
    public var bytes: [UInt8] {
        switch self {
        case .v4(let value):
            return (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
        case .v6(let high, let low):
            return (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
                + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
        }
    }

    /// Dotted quad, or RFC 5952 text (lower case, the longest run of zero groups as `::`).
    public var description: String {
        switch self {
        case .v4:
            return bytes.map(String.init).joined(separator: ".")
        case .v6:
            let b = bytes
            let groups = (0..<8).map { Int(b[2 * $0]) << 8 | Int(b[2 * $0 + 1]) }
            var bestStart = -1
            var bestLength = 1
            var i = 0
            while i < 8 {
                if groups[i] == 0 {
                    var j = i
                    while j < 8, groups[j] == 0 { j += 1 }
                    if j - i > bestLength { (bestStart, bestLength) = (i, j - i) }
                    i = j
                } else {
                    i += 1
                }
            }
            func hex(_ range: Range<Int>) -> String {
                groups[range].map { String($0, radix: 16) }.joined(separator: ":")
            }
            if bestStart < 0 { return hex(0..<8) }
            return hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8)
        }
    }

    /// The text a URL carries: IPv6 in brackets.
    public var urlHost: String {
        if case .v6 = self { return "[\(description)]" }
        return description
    }
}
