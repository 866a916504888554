#if canImport(Glibc)
import Glibc
import Foundation
#endif
@testable import HTTPServer

/// A response as the raw test client read it.
struct ClientResponse {
    var status: Int
    var reason: String
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A blocking POSIX TCP client with a receive timeout, for talking raw HTTP to a test server.
final class TestClient {
    let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var sawEOF = false

    init(port: Int, timeoutSeconds: Int = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestError("socket failed") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            throw TestError("connect failed: errno \(errno)")
        }
    }

    /// A client over a socket that is already connected; it closes the socket when done.
    init(adopting fd: Int32) {
        self.fd = fd
    }

    deinit { close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard n > 0 else { throw TestError("send failed: errno \(errno)") }
            offset += n
        }
    }

    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads more bytes into the buffer; false on EOF, throws on timeout or error.
    @discardableResult
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 {
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
        if n == 0 {
            sawEOF = true
            return false
        }
        if errno == ECONNRESET {
            sawEOF = true
            return false
        }
        throw TestError("recv failed or timed out: errno \(errno)")
    }

    /// Reads one response (head, then `Content-Length` bytes unless `head` or bodiless).
    func readResponse(head: Bool = false) throws -> ClientResponse {
        var headEnd: Int?
        while headEnd == nil {
            if let range = findHeadEnd() { headEnd = range; break }
            guard try fill() else { throw TestError("EOF before a response head (\(buffer.count) bytes buffered)") }
        }
        let headBytes = Array(buffer[0..<headEnd!])
        buffer.removeFirst(headEnd! + 4)
        let lines = String(decoding: headBytes, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ", maxSplits: 2).map(String.init)
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw TestError("bad status line \(lines[0])") }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon])
            let rawValue = String(line[line.index(after: colon)...])
            headers.append((name, rawValue.trimmingCharacters(in: .whitespaces)))
        }
        var response = ClientResponse(status: status, reason: statusParts.count > 2 ? statusParts[2] : "",
                                      headers: headers, body: [])
        let length = response.header("Content-Length").flatMap { Int($0) } ?? 0
        if !head && status >= 200 && status != 204 && status != 304 {
            while buffer.count < length {
                guard try fill() else { throw TestError("EOF inside a body") }
            }
            response.body = Array(buffer[0..<length])
            buffer.removeFirst(length)
        }
        return response
    }

    /// Whether the server closes the connection (EOF or reset) with no further bytes.
    func readsEOF() throws -> Bool {
        if !buffer.isEmpty { return false }
        return try !fill() && buffer.isEmpty
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }
}

struct TestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return String(text)
    }

    func components(separatedBy separator: String) -> [String] {
        var parts: [String] = []
        var rest = Substring(self)
        while let range = rest.firstRange(of: separator) {
            parts.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        parts.append(String(rest))
        return parts
    }
}

/// Starts a server on an ephemeral loopback port, runs `body`, and drains the server afterwards.
func withTestServer<T>(_ router: Router, configure: (inout HTTPServerConfiguration) -> Void = { _ in },
                       hook: (any HTTPResponseHook)? = nil,
                       _ body: (HTTPServer) async throws -> T) async throws -> T {
    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
    configuration.eventLoopThreads = 2
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, router: router, hook: hook)
    try server.start()
    do {
        let result = try await body(server)
        server.shutdown()
        await server.waitUntilStopped()
        return result
    } catch {
        server.shutdown()
        await server.waitUntilStopped()
        throw error
    }
}

/// Sleeps the calling thread (test helpers run on the cooperative pool only briefly).
func sleepMilliseconds(_ ms: Int) {
    usleep(UInt32(ms) * 1000)
}
