import Glibc

/// Why the server could not start.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// The system call or step that failed.
    public var operation: String
    /// The `errno` it failed with (0 when not a system error).
    public var code: Int32

    public var description: String {
        code == 0
            ? "HTTPServer: \(operation)" : "HTTPServer: \(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}

/// Thin wrappers over the socket system calls the server uses.
enum POSIX {
    /// A bound, listening, non-blocking socket and the port it got. It has `TCP_NODELAY`, which
    /// Linux copies to every socket accepted from it: a head and a body sent apart are not held
    /// back for an acknowledgement, with no `setsockopt` per connection.
    static func listen(host: String, port: Int, backlog: Int) throws -> (fd: Int32, port: Int) {
        var storage = sockaddr_storage()
        var length: socklen_t
        let family: Int32
        if host.contains(":") {
            family = AF_INET6
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else {
                throw HTTPServerError(operation: "parsing host '\(host)'", code: 0)
            }
            withUnsafeBytes(of: address) { raw in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: raw) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            family = AF_INET
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            let text = host == "localhost" ? "127.0.0.1" : host
            guard inet_pton(AF_INET, text, &address.sin_addr) == 1 else {
                throw HTTPServerError(operation: "parsing host '\(host)'", code: 0)
            }
            withUnsafeBytes(of: address) { raw in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: raw) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPServerError(operation: "socket", code: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw HTTPServerError(operation: "bind \(host):\(port)", code: code)
        }
        guard Glibc.listen(fd, Int32(clamping: backlog)) == 0 else {
            let code = errno
            close(fd)
            throw HTTPServerError(operation: "listen", code: code)
        }
        var actual = sockaddr_storage()
        length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, peerAddress(actual)?.port ?? port)
    }

    /// The numeric address and port in a socket address.
    static func peerAddress(_ storage: sockaddr_storage) -> HTTPPeerAddress? {
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafeBytes(of: storage) { $0.loadUnaligned(as: sockaddr_in.self) }
            return HTTPPeerAddress(ip: ipv4Text(address.sin_addr), port: Int(UInt16(bigEndian: address.sin_port)))
        case AF_INET6:
            return peerAddress(storage, as: sockaddr_in6.self, textLength: INET6_ADDRSTRLEN) { ($0.sin6_addr, $0.sin6_port) }
        default: return nil
        }
    }

    /// The address (as `inet_ntop` writes it, in at most `textLength` bytes) and the port that
    /// `parts` reads from `storage` seen as a `Socket` (`sockaddr_in` or `sockaddr_in6`).
    private static func peerAddress<Socket, Address>(
        _ storage: sockaddr_storage, as _: Socket.Type, textLength: Int32,
        _ parts: (Socket) -> (address: Address, port: in_port_t)
    ) -> HTTPPeerAddress {
        let parsed = withUnsafeBytes(of: storage) { parts($0.loadUnaligned(as: Socket.self)) }
        var text = [CChar](repeating: 0, count: Int(textLength))
        _ = withUnsafeBytes(of: parsed.address) {
            inet_ntop(Int32(storage.ss_family), $0.baseAddress, &text, socklen_t(text.count))
        }
        return HTTPPeerAddress(ip: cString(text), port: Int(UInt16(bigEndian: parsed.port)))
    }

    /// An IPv4 address as `inet_ntop` writes it (dotted decimal, no leading zeros), without its
    /// `sprintf` and the arrays around it: every accepted connection's peer is written so.
    static func ipv4Text(_ address: in_addr) -> String {
        withUnsafeBytes(of: address) { octets in
            String(unsafeUninitializedCapacity: 15) { out in
                var count = 0
                for (index, octet) in octets.enumerated() {
                    if index > 0 {
                        out[count] = UInt8(ascii: ".")
                        count += 1
                    }
                    if octet >= 100 {
                        out[count] = 0x30 + octet / 100
                        count += 1
                    }
                    if octet >= 10 {
                        out[count] = 0x30 + octet / 10 % 10
                        count += 1
                    }
                    out[count] = 0x30 + octet % 10
                    count += 1
                }
                return count
            }
        }
    }

    private static func cString(_ chars: [CChar]) -> String {
        String(decoding: chars.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Closes a descriptor; `EINTR` from `close(2)` is not retried on Linux (the descriptor is gone).
    static func closeDescriptor(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}
