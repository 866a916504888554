/// A CIDR block (`10.0.0.0/8`, `fc00::/7`), or one address (`127.0.0.1` = `/32`). An IPv4 block
/// contains IPv4 addresses only: `::ffff:127.0.0.1` is an IPv6 address and needs an IPv6 block.
public struct NetworkBlock: Sendable, Hashable, CustomStringConvertible {
    public let address: IPAddress
    public let prefixLength: Int

    /// Parses `address[/prefix]`; nil when malformed or when bits are set past the prefix.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else { return nil }
        let maxPrefix = address.bytes.count * 8
        var prefix = maxPrefix
        if parts.count == 2 {
            guard (1...3).contains(parts[1].utf8.count), parts[1].utf8.allSatisfy({ $0 &- 0x30 < 10 }),
                let value = Int(parts[1]), value <= maxPrefix
            else { return nil }
            prefix = value
        }
        self.init(address, prefixLength: prefix)
        guard Self.masked(address, prefix) == address else { return nil }
    }

    init(_ address: IPAddress, prefixLength: Int) {
        self.address = address
        self.prefixLength = prefixLength
    }

    /// Whether `other` lies in the block (same family only).
    public func contains(_ other: IPAddress) -> Bool {
        switch (address, other) {
        case (.v4, .v4), (.v6, .v6): return Self.masked(other, prefixLength) == address
        default: return false
        }
    }

    public var description: String { "\(address)/\(prefixLength)" }

    static func masked(_ address: IPAddress, _ prefix: Int) -> IPAddress {
        switch address {
        case .v4(let value):
            let mask: UInt32 = prefix == 0 ? 0 : ~UInt32(0) << UInt32(32 - prefix)
            return .v4(value & mask)
        case .v6(let high, let low):
            let highMask: UInt64 = prefix == 0 ? 0 : prefix >= 64 ? ~0 : ~UInt64(0) << UInt64(64 - prefix)
            let lowMask: UInt64 = prefix <= 64 ? 0 : prefix == 128 ? ~0 : ~UInt64(0) << UInt64(128 - prefix)
            return .v6(high: high & highMask, low: low & lowMask)
        }
    }
}
