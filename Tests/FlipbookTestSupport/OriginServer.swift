import Foundation
import Glibc
import Synchronization

/// An origin server on a loopback address for the source-fetching tests: answers each path with
/// a programmed reply (a thread per connection, so a slow reply holds no other), and records what
/// a test asserts on — how many connections it accepted, the request heads, and whether a long
/// body was cut off by the client before it was all sent.
public final class OriginServer: Sendable {
    /// What a path answers.
    public enum Reply: Sendable {
        /// A whole answer: status, header fields (Content-Length is added), body.
        case answer(status: Int, headers: [String], body: [UInt8])
        /// Waits this long before answering.
        case slow(seconds: Double, then: [UInt8])
        /// `total` bytes of body without Content-Length (ended by closing), written in 16 KiB
        /// pieces; when the client closes first, ``cutShort`` becomes true.
        case stream(total: Int, contentLength: Bool)
        /// `body` with its Content-Length, in slices: up to the first of `cuts`, then each next
        /// slice after a signal of `gate`, the rest after one more. With `closeEarly`, the
        /// connection is closed at the last cut instead (a body cut off mid-way).
        case sliced(body: [UInt8], cuts: [Int], gate: DispatchSemaphore, closeEarly: Bool)
    }

    public let address: String
    public let port: Int
    private let listener: Int32
    private let routes: Mutex<[String: Reply]>
    private let state = Mutex<(connections: Int, heads: [String], cutShort: Bool, bytesSent: Int)>((0, [], false, 0))

    public var connections: Int { state.withLock { $0.connections } }
    public var heads: [String] { state.withLock { $0.heads } }
    public var cutShort: Bool { state.withLock { $0.cutShort } }
    public var bytesSent: Int { state.withLock { $0.bytesSent } }
    public var base: String { "http://\(address):\(port)" }

    public init(address: String = "127.0.0.1", routes: [String: Reply] = [:]) throws {
        self.address = address
        self.routes = Mutex(routes)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_addr.s_addr = inet_addr(address)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 && listen(fd, 64) == 0
            }
        }
        guard ok else {
            close(fd)
            throw TestFailure("origin cannot listen on \(address): errno \(errno)")
        }
        listener = fd
        port = Int(UInt16(bigEndian: sin.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    public func set(_ path: String, _ reply: Reply) { routes.withLock { $0[path] = reply } }

    /// Stops accepting (connections in progress finish by themselves).
    public func stop() { shutdown(listener, Int32(SHUT_RDWR)) }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                close(listener)
                return
            }
            state.withLock { $0.connections += 1 }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.containsHeadEnd() {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return }
            request += buffer[..<n]
        }
        let head = String(decoding: request, as: UTF8.self)
        state.withLock { $0.heads.append(head) }
        let target = head.split(separator: " ", maxSplits: 2).dropFirst().first.map(String.init) ?? "/"
        let path = String(target.prefix { $0 != "?" })
        let reply = routes.withLock { $0[path] } ?? .answer(status: 404, headers: [], body: Array("no".utf8))
        switch reply {
        case .answer(let status, let headers, let body):
            send(fd, Array(Self.head(status, headers + ["Content-Length: \(body.count)"]).utf8) + body)
        case .slow(let seconds, let body):
            usleep(UInt32(seconds * 1e6))
            send(fd, Array(Self.head(200, ["Content-Length: \(body.count)"]).utf8) + body)
        case .sliced(let body, let cuts, let gate, let closeEarly):
            guard send(fd, Array(Self.head(200, ["Content-Length: \(body.count)"]).utf8)) else { return }
            var sent = 0
            for cut in cuts + [body.count] {
                if sent > 0 || cut == body.count {
                    // As long as the longest fetch deadline a test sets: a test waiting on the
                    // cooperative pool can be held up for minutes on a loaded machine, and an
                    // origin that gave up first would fail it with a partial transfer.
                    guard gate.wait(timeout: .now() + 300) == .success else { return }
                }
                if cut == body.count, closeEarly { return }
                guard send(fd, Array(body[sent..<cut])) else { return }
                sent = cut
                state.withLock { $0.bytesSent = sent }
            }
        case .stream(let total, let contentLength):
            var headers = ["Content-Type: image/gif"]
            if contentLength { headers.append("Content-Length: \(total)") }
            guard send(fd, Array(Self.head(200, headers).utf8)) else { return }
            let piece = [UInt8](repeating: 0x47, count: 16 * 1024)
            var sent = 0
            while sent < total {
                guard send(fd, Array(piece.prefix(total - sent))) else {
                    state.withLock { $0.cutShort = true }
                    break
                }
                sent += min(piece.count, total - sent)
                state.withLock { $0.bytesSent = sent }
                usleep(1000)  // let the client's limit act before the kernel buffers everything
            }
        }
    }

    @discardableResult
    private func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    public static func head(_ status: Int, _ headers: [String]) -> String {
        "HTTP/1.1 \(status) X\r\nConnection: close\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n"
    }
}

extension [UInt8] {
    fileprivate func containsHeadEnd() -> Bool {
        count >= 4
            && (0...(count - 4)).contains { self[$0] == 13 && self[$0 + 1] == 10 && self[$0 + 2] == 13 && self[$0 + 3] == 10 }
    }
}
