import Glibc
import Testing

@testable import HTTPServer

/// The peer address of an accepted connection: IPv4 written by hand (no `inet_ntop`, whose
/// `sprintf` was a tenth of a refused connection's instructions), exactly as `inet_ntop` writes it.
@Suite("Peer addresses")
struct PeerAddressTests {
    static func inetNtop(_ address: in_addr) -> String {
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        var address = address
        _ = inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test func ipv4IsWrittenAsInetNtopWritesIt() {
        var octets: [[UInt8]] = [[0, 0, 0, 0], [255, 255, 255, 255], [127, 0, 0, 1], [10, 9, 99, 100], [1, 20, 199, 200]]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 { octets.append((0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) }) }
        for quad in octets {
            var address = in_addr()
            withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: quad) }
            #expect(POSIX.ipv4Text(address) == Self.inetNtop(address), "\(quad)")
        }
    }

    @Test func aSocketAddressGivesItsAddressAndPort() {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(54321).bigEndian)
        _ = inet_pton(AF_INET, "192.168.10.7", &address.sin_addr)
        var storage = sockaddr_storage()
        withUnsafeBytes(of: address) { raw in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: raw) } }
        let peer = POSIX.peerAddress(storage)
        #expect(peer?.ip == "192.168.10.7" && peer?.port == 54321)

        var address6 = sockaddr_in6()
        address6.sin6_family = sa_family_t(AF_INET6)
        address6.sin6_port = in_port_t(UInt16(443).bigEndian)
        _ = inet_pton(AF_INET6, "2001:db8::17", &address6.sin6_addr)
        storage = sockaddr_storage()
        withUnsafeBytes(of: address6) { raw in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: raw) } }
        let peer6 = POSIX.peerAddress(storage)
        #expect(peer6?.ip == "2001:db8::17" && peer6?.port == 443)
    }
}
