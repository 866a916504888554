import Foundation
import Glibc

/// A TCP socket bound to a free port of 127.0.0.1 and not listening: while it is open, that port
/// refuses connections and nobody else can take it; closed, the port is free for a server to bind.
public final class BoundLoopbackPort: @unchecked Sendable {
    public let fd: Int32
    public let port: Int

    public init() throws {
        // Every stored property is set only on success: a throw after that would run deinit.
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, length) == 0 && getsockname(socketFD, $0, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(socketFD)
            throw TestFailure("no free port: errno \(code)")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        fd = socketFD
    }

    deinit { close(fd) }

    /// A port that was free a moment ago, for a server process to bind next.
    public static func free() throws -> Int {
        try BoundLoopbackPort().port
    }
}
