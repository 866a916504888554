import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 exchange over a fresh loopback connection (`Connection: close`, read to EOF),
/// so tests see exactly the bytes the server sent.
struct HTTPTestClient {
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        var text: String { String(decoding: body, as: UTF8.self) }

        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let port: Int

    func get(_ path: String, headers: [String: String] = [:]) throws -> Response {
        try send("GET", path, headers: headers)
    }

    func send(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil) throws -> Response {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let raw = try exchange(Array(head.utf8) + (body ?? []))
        return try Self.parse(raw, method: method)
    }

    /// Sends `bytes` and reads until the server closes (or 30 s pass).
    func exchange(_ bytes: [UInt8]) throws -> [UInt8] {
        let fd = try Self.connect(port: port, timeoutSeconds: 30)
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }  // the server may answer (413, 401) before reading everything
            offset += n
        }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { received += chunk[0..<n] } else { break }
        }
        return received
    }

    /// A socket connected to the loopback `port`, whose reads time out after `timeoutSeconds`.
    static func connect(port: Int, timeoutSeconds: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "connect: errno \(errno)")
        }
        return fd
    }

    static func parse(_ raw: [UInt8], method: String) throws -> Response {
        guard let end = (0..<max(0, raw.count - 3)).first(where: {
            raw[$0] == 13 && raw[$0 + 1] == 10 && raw[$0 + 2] == 13 && raw[$0 + 3] == 10
        }) else { throw Failure(description: "no response head in \(raw.count) bytes") }
        let lines = String(decoding: raw[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure(description: "bad status line \(lines[0])") }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            headers.append((String(line[..<colon]), value))
        }
        var body = Array(raw[(end + 4)...])
        if let length = headers.first(where: { $0.0.lowercased() == "content-length" }).flatMap({ Int($0.1) }),
           method != "HEAD", body.count > length {
            body = Array(body[0..<length])
        }
        return Response(status: status, headers: headers, body: body)
    }
}
