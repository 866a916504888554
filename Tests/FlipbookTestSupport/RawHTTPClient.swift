import Foundation
import Glibc

/// A test's failure to talk to the server (socket errors, timeouts, malformed answers).
public struct TestFailure: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// One response exactly as the server sent it.
public struct HTTPTestResponse: Sendable {
    public var status: Int
    public var reason: String
    public var headers: [(String, String)]
    public var body: [UInt8]

    /// The first field named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (empty when it is not one).
    public var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }
}

/// A blocking loopback TCP connection for talking raw HTTP/1.1 to a server under test: the bytes
/// go out as given, responses are read one at a time (keep-alive, pipelining) or to EOF. Every
/// read times out (`timeoutSeconds`), so a server that never answers fails the test instead of
/// hanging it. The default is long: a debug server on a 2-core machine beside other builds (load
/// 30+) has answered after more than 5 s; tests of the server's own timeouts pass theirs.
public final class RawHTTPClient {
    public let fd: Int32
    private var buffer: [UInt8] = []
    public private(set) var sawEOF = false

    public init(port: Int, timeoutSeconds: Int = 60) throws {
        // The descriptor becomes `fd` only once connected. A throw after every stored property is
        // set runs `deinit`, whose close would come after this init's own: a second close of the
        // same number, which by then may be another thread's file or socket (a server's
        // connection, a log file). Tests that poll a port until a server listens fail to
        // connect many times, while other tests run in the same process.
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(socketFD, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(socketFD)
            throw TestFailure("connect: errno \(code)")
        }
        fd = socketFD
    }

    /// A client over a socket that is already connected; it closes the socket when done.
    public init(adopting fd: Int32) {
        self.fd = fd
    }

    deinit { close(fd) }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends every byte; throws when the connection fails first.
    public func send(_ bytes: [UInt8]) throws {
        guard sendUntilClosed(bytes) == bytes.count else { throw TestFailure("send: errno \(errno)") }
    }

    /// Sends what the server takes before it closes (it may answer 413 or 401 before reading a
    /// whole body); returns how many bytes went out.
    @discardableResult
    public func sendUntilClosed(_ bytes: [UInt8]) -> Int {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard n > 0 else { break }
            offset += n
        }
        return offset
    }

    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads more bytes into the buffer; false on EOF (or reset), throws on timeout or error.
    @discardableResult
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 {
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
        if n == 0 || errno == ECONNRESET {
            sawEOF = true
            return false
        }
        throw TestFailure("recv failed or timed out: errno \(errno)")
    }

    /// Reads one response: the head, then `Content-Length` bytes unless `head` (the answer to a
    /// HEAD) or the status has no body.
    public func readResponse(head: Bool = false) throws -> HTTPTestResponse {
        var headEnd = Self.headEnd(in: buffer)
        while headEnd == nil {
            guard try fill() else { throw TestFailure("EOF before a response head (\(buffer.count) bytes buffered)") }
            headEnd = Self.headEnd(in: buffer)
        }
        var response = try Self.parseHead(buffer[0..<headEnd!])
        buffer.removeFirst(headEnd! + 4)
        let length = response.header("Content-Length").flatMap { Int($0) } ?? 0
        if !head && response.status >= 200 && response.status != 204 && response.status != 304 {
            while buffer.count < length {
                guard try fill() else { throw TestFailure("EOF inside a body") }
            }
            response.body = Array(buffer[0..<length])
            buffer.removeFirst(length)
        }
        return response
    }

    /// Everything the server sends until it closes.
    public func readToEOF() throws -> [UInt8] {
        while try fill() {}
        defer { buffer.removeAll() }
        return buffer
    }

    /// Whether the server closes the connection (EOF or reset) with no further bytes.
    public func readsEOF() throws -> Bool {
        if !buffer.isEmpty { return false }
        return try !fill() && buffer.isEmpty
    }

    /// One whole response in `raw` (as read to EOF); the body is cut at `Content-Length`, and is
    /// empty for a HEAD.
    public static func parse(_ raw: [UInt8], method: String) throws -> HTTPTestResponse {
        guard let end = headEnd(in: raw) else { throw TestFailure("no response head in \(raw.count) bytes") }
        var response = try parseHead(raw[0..<end])
        var body = Array(raw[(end + 4)...])
        if method == "HEAD" {
            body = []
        } else if let length = response.header("Content-Length").flatMap({ Int($0) }), body.count > length {
            body = Array(body[0..<length])
        }
        response.body = body
        return response
    }

    private static func headEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        return (0...(bytes.count - 4)).first {
            bytes[$0] == 13 && bytes[$0 + 1] == 10 && bytes[$0 + 2] == 13 && bytes[$0 + 3] == 10
        }
    }

    private static func parseHead(_ bytes: ArraySlice<UInt8>) throws -> HTTPTestResponse {
        let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ", maxSplits: 2).map(String.init)
        guard parts.count >= 2, let status = Int(parts[1]) else { throw TestFailure("bad status line \(lines[0])") }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            headers.append((String(line[..<colon]), value))
        }
        return HTTPTestResponse(status: status, reason: parts.count > 2 ? parts[2] : "", headers: headers, body: [])
    }
}

/// One HTTP/1.1 exchange per call over a fresh loopback connection (`Connection: close`, read
/// to EOF), so tests see exactly the bytes the server sent.
public struct HTTPTestClient: Sendable {
    public let port: Int
    /// How long a read may wait before the exchange fails. Only there to turn a hang into a
    /// failure: generous, because tests hold some requests waiting on purpose (for decode memory,
    /// for a drain) while they do other things, on a machine that may be loaded.
    public var timeoutSeconds: Int

    public init(port: Int, timeoutSeconds: Int = 120) {
        self.port = port
        self.timeoutSeconds = timeoutSeconds
    }

    public func get(_ path: String, headers: [String: String] = [:]) throws -> HTTPTestResponse {
        try send("GET", path, headers: headers)
    }

    public func send(
        _ method: String, _ path: String, headers: [String: String] = [:],
        body: [UInt8]? = nil
    ) throws -> HTTPTestResponse {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return try RawHTTPClient.parse(exchange(Array(head.utf8) + (body ?? [])), method: method)
    }

    /// Sends `bytes` on a new connection and reads until the server closes (or a read waits
    /// `timeoutSeconds`).
    public func exchange(_ bytes: [UInt8]) throws -> [UInt8] {
        let connection = try RawHTTPClient(port: port, timeoutSeconds: timeoutSeconds)
        connection.sendUntilClosed(bytes)
        return try connection.readToEOF()
    }
}
