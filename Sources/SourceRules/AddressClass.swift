/// What kind of destination an address is, for the source fetcher's connect-time check. Every
/// class but ``public`` is refused unless `sources.allowedNetworks` lists a block holding the
/// address (imgproxy and imagor refuse the same classes; see docs/sources-and-signing.md).
public enum AddressClass: String, Sendable, CaseIterable {
    case `public`
    /// `127.0.0.0/8`, `::1`.
    case loopback
    /// `0.0.0.0/8`, `::` (reaches the host itself on Linux: CVE-2025-24354).
    case unspecified
    /// RFC 1918 (`10/8`, `172.16/12`, `192.168/16`), unique local `fc00::/7`, site-local `fec0::/10`.
    case `private`
    /// `169.254.0.0/16` (cloud metadata endpoints live here), `fe80::/10`.
    case linkLocal = "link-local"
    /// Carrier-grade NAT, `100.64.0.0/10`.
    case cgnat
    /// `224.0.0.0/4`, `ff00::/8`.
    case multicast
    /// `255.255.255.255`.
    case broadcast
    /// IETF, documentation, benchmarking and future-use blocks; IPv6 outside `2000::/3`.
    case reserved
    /// An IPv4 address wrapped in IPv6: mapped `::ffff:0:0/96`, compatible `::/96`, NAT64
    /// `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`, Teredo `2001::/32`.
    case ipv4InIPv6 = "ipv4-in-ipv6"

    /// The class of `address`; the first block of the table that holds it decides.
    public init(_ address: IPAddress) {
        for (block, kind) in Self.table where block.contains(address) {
            self = kind
            return
        }
        if case .v6 = address { self = .reserved } else { self = .public }  // v6: outside 2000::/3
    }

    /// Blocks in the order they are tried. IPv6 global unicast (`2000::/3`) is public after the
    /// special blocks inside it.
    static let table: [(NetworkBlock, AddressClass)] = entries.map { (NetworkBlock($0.0)!, $0.1) }

    private static let entries: [(String, AddressClass)] = [
        ("0.0.0.0/8", .unspecified), ("10.0.0.0/8", .private), ("100.64.0.0/10", .cgnat),
        ("127.0.0.0/8", .loopback), ("169.254.0.0/16", .linkLocal), ("172.16.0.0/12", .private),
        ("192.0.0.0/24", .reserved), ("192.0.2.0/24", .reserved), ("192.88.99.0/24", .reserved),
        ("192.168.0.0/16", .private), ("198.18.0.0/15", .reserved), ("198.51.100.0/24", .reserved),
        ("203.0.113.0/24", .reserved), ("224.0.0.0/4", .multicast), ("255.255.255.255/32", .broadcast),
        ("240.0.0.0/4", .reserved),
        ("::/128", .unspecified), ("::1/128", .loopback), ("::ffff:0:0/96", .ipv4InIPv6),
        ("::/96", .ipv4InIPv6), ("64:ff9b::/96", .ipv4InIPv6), ("64:ff9b:1::/48", .ipv4InIPv6),
        ("2001::/32", .ipv4InIPv6), ("2002::/16", .ipv4InIPv6), ("2001::/23", .reserved),
        ("2001:db8::/32", .reserved), ("3fff::/20", .reserved), ("fc00::/7", .private),
        ("fec0::/10", .private), ("fe80::/10", .linkLocal), ("ff00::/8", .multicast),
        ("2000::/3", .public),
    ]
}
