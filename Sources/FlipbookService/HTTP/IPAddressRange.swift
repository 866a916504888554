import Glibc

/// An IPv4 or IPv6 address or CIDR block (`10.0.0.0/8`, `::1`), used to decide which peers are
/// trusted proxies whose `X-Forwarded-For` may be believed.
public struct IPAddressRange: Sendable, Equatable {
    let bytes: [UInt8]
    let prefixLength: Int

    /// Parses `address` or `address/prefix`; nil when it is neither.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let bytes = Self.parse(String(first)) else { return nil }
        let maxPrefix = bytes.count * 8
        if parts.count == 2 {
            guard let prefix = Int(parts[1]), (0...maxPrefix).contains(prefix) else { return nil }
            prefixLength = prefix
        } else {
            prefixLength = maxPrefix
        }
        self.bytes = bytes
    }

    /// Whether `address` (text form) lies in this range. IPv4-mapped IPv6 addresses
    /// (`::ffff:10.0.0.1`) match IPv4 ranges.
    public func contains(_ address: String) -> Bool {
        guard var other = Self.parse(address) else { return false }
        if other.count == 16, bytes.count == 4, other[0..<10].allSatisfy({ $0 == 0 }), other[10] == 0xff, other[11] == 0xff {
            other = Array(other[12..<16])
        }
        guard other.count == bytes.count else { return false }
        var remaining = prefixLength
        for i in 0..<bytes.count where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xff << (8 - bits))
            if bytes[i] & mask != other[i] & mask { return false }
            remaining -= bits
        }
        return true
    }

    static func parse(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}
