import Glibc
import SourceRules

/// Turns a source's host name into addresses. The fetcher checks every address it gets and pins
/// the connection to them (no second lookup); tests inject their own names (as `/etc/hosts`
/// would) without touching the machine's files.
public protocol SourceResolver: Sendable {
    /// Every address of `name`; empty when it has none (the origin is then unreachable).
    func addresses(of name: String) -> [IPAddress]
}

/// The system's resolver (`getaddrinfo`: `/etc/hosts`, then DNS, per `nsswitch.conf`).
public struct SystemResolver: SourceResolver {
    public init() {}

    public func addresses(of name: String) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>? = nil
        guard getaddrinfo(name, nil, &hints, &list) == 0 else { return [] }
        defer { freeaddrinfo(list) }
        var found: [IPAddress] = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ai_addr, let ip = Self.address(address), !found.contains(ip) {
                found.append(ip)
            }
            entry = current.pointee.ai_next
        }
        return found
    }

    /// The IP address of a socket address (IPv4 or IPv6; nil for other families).
    static func address(_ pointer: UnsafePointer<sockaddr>) -> IPAddress? {
        switch Int32(pointer.pointee.sa_family) {
        case AF_INET:
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                .v4(UInt32(bigEndian: $0.pointee.sin_addr.s_addr))
            }
        case AF_INET6:
            return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                var address = $0.pointee.sin6_addr
                return withUnsafeBytes(of: &address) { IPAddress(ipv6: Array($0)) }
            }
        default:
            return nil
        }
    }
}

/// Fixed answers, as `/etc/hosts` gives them (tests, and a deployment that wants no DNS).
public struct StaticResolver: SourceResolver {
    public let table: [String: [IPAddress]]
    public init(_ table: [String: [IPAddress]]) { self.table = table }
    public func addresses(of name: String) -> [IPAddress] { table[name.lowercased()] ?? [] }
}
