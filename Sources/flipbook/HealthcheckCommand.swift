import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `flipbook healthcheck`: one HTTP/1.1 GET on a plain TCP socket, exit 0 on 200 and 1 otherwise.
///
/// Made for the container's `HEALTHCHECK`: the runtime image has no curl, and this needs nothing
/// beyond libc (no TLS, no URLSession, no extra shared libraries).
struct HealthcheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "healthcheck",
        abstract: "GET a health URL of a running server; exit 0 on HTTP 200, 1 otherwise.")

    @Option(help: ArgumentHelp(
        "The URL to GET (http only).",
        discussion: "Default: http://127.0.0.1:$FLIPBOOK_SERVER_PORT/healthz, port 8080 when that is unset."))
    var url: String?

    @Option(help: "Give up after this many seconds (connect, send and receive together).")
    var timeout: Double = 3

    /// The URL to probe: `--url`, else /healthz on loopback at the port the server is configured
    /// with through the environment (the container's HEALTHCHECK runs with the server's env).
    static func defaultURL(environment: [String: String]) -> String {
        let port = environment["FLIPBOOK_SERVER_PORT"].flatMap { UInt16($0) } ?? 8080
        return "http://127.0.0.1:\(port)/healthz"
    }

    func run() throws {
        let url = self.url ?? Self.defaultURL(environment: ProcessInfo.processInfo.environment)
        // Every failure, a bad flag included, exits 1: Docker reads 0 as healthy and 1 as
        // unhealthy and reserves other codes.
        guard timeout > 0, timeout.isFinite else {
            unhealthy("--timeout must be a positive number of seconds")
        }
        let target: HealthcheckTarget
        do {
            target = try HealthcheckTarget(parsing: url)
        } catch {
            unhealthy(error.description)
        }
        let status: Int
        do {
            status = try HealthcheckProbe(target: target, timeoutSeconds: timeout).fetchStatus()
        } catch {
            unhealthy("\(url): \(error.description)")
        }
        guard status == 200 else { unhealthy("\(url) answered \(status)") }
        print("healthy: \(url) answered 200")
    }

    private func unhealthy(_ message: String) -> Never {
        FileHandle.standardError.write(Data("unhealthy: \(message)\n".utf8))
        Foundation.exit(1)
    }
}

/// Host, port and request target of an `http://` URL.
struct HealthcheckTarget: Equatable {
    var host: String
    var port: UInt16
    var path: String

    /// Accepts `http://host[:port][/path]`, with `[v6]` literals; no user info, no https.
    init(parsing url: String) throws(HealthcheckError) {
        let scheme = "http://"
        guard url.lowercased().hasPrefix(scheme) else {
            throw HealthcheckError.badURL("--url must start with http:// (got \(url))")
        }
        let rest = url.dropFirst(scheme.count)
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[rest.startIndex..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if target.isEmpty { target = "/" } else if target.first == "?" { target = "/" + target }
        guard !authority.isEmpty, !authority.contains("@") else {
            throw HealthcheckError.badURL("--url has no usable host (got \(url))")
        }

        var hostPart = Substring(authority)
        var portPart: Substring?
        if hostPart.first == "[" {
            guard let close = hostPart.firstIndex(of: "]") else {
                throw HealthcheckError.badURL("--url has an unterminated [IPv6] host")
            }
            let after = hostPart[hostPart.index(after: close)...]
            hostPart = hostPart[hostPart.index(after: hostPart.startIndex)..<close]
            if after.first == ":" { portPart = after.dropFirst() } else if !after.isEmpty {
                throw HealthcheckError.badURL("--url has junk after the [IPv6] host")
            }
        } else if let colon = hostPart.lastIndex(of: ":") {
            portPart = hostPart[hostPart.index(after: colon)...]
            hostPart = hostPart[..<colon]
        }
        var port: UInt16 = 80
        if let portPart {
            guard let parsed = UInt16(portPart), parsed > 0 else {
                throw HealthcheckError.badURL("--url has a bad port '\(portPart)'")
            }
            port = parsed
        }
        guard !hostPart.isEmpty else { throw HealthcheckError.badURL("--url has an empty host") }
        self.host = String(hostPart)
        self.port = port
        self.path = target
    }
}

enum HealthcheckError: Error, CustomStringConvertible {
    case badURL(String)
    case resolve(String)
    case connect(String)
    case timedOut(String)
    case io(String)
    case badResponse(String)

    var description: String {
        switch self {
        case .badURL(let detail): detail
        case .resolve(let detail): "cannot resolve host: \(detail)"
        case .connect(let detail): "cannot connect: \(detail)"
        case .timedOut(let stage): "timed out while \(stage)"
        case .io(let detail): "socket error: \(detail)"
        case .badResponse(let detail): "bad response: \(detail)"
        }
    }
}

/// A single blocking-with-deadline GET: resolve, non-blocking connect polled against the
/// deadline, send the request, read until the status line is complete.
struct HealthcheckProbe {
    let target: HealthcheckTarget
    let timeoutSeconds: Double

    func fetchStatus() throws(HealthcheckError) -> Int {
        let deadline = monotonicSeconds() + timeoutSeconds
        let fd = try openConnection(deadline: deadline)
        defer { close(fd) }

        let hostHeader = target.host.contains(":") ? "[\(target.host)]" : target.host
        let request = "GET \(target.path) HTTP/1.1\r\nHost: \(hostHeader):\(target.port)\r\n"
            + "User-Agent: flipbook-healthcheck\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        try sendAll(fd: fd, bytes: Array(request.utf8), deadline: deadline)

        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while received.count < 8192 {
            if let lineEnd = received.firstIndex(of: UInt8(ascii: "\n")) {
                return try Self.parseStatusLine(Array(received[..<lineEnd]))
            }
            try wait(fd: fd, events: Int16(POLLIN), deadline: deadline, stage: "waiting for the response")
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                throw .io(String(cString: strerror(errno)))
            }
            if count == 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        if received.isEmpty { throw .badResponse("connection closed before any response") }
        return try Self.parseStatusLine(received)
    }

    /// `HTTP/1.x NNN reason` → NNN.
    static func parseStatusLine(_ line: [UInt8]) throws(HealthcheckError) -> Int {
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = text.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3,
              let status = Int(parts[1]) else {
            throw .badResponse("status line '\(text.prefix(80))'")
        }
        return status
    }

    private func openConnection(deadline: Double) throws(HealthcheckError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(target.host, String(target.port), &hints, &list)
        guard rc == 0, let first = list else {
            throw .resolve("\(target.host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }

        var lastError = "no addresses"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            if fd < 0 { lastError = String(cString: strerror(errno)); continue }
            let flags = fcntl(fd, F_GETFL, 0)
            _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
            if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            guard errno == EINPROGRESS else {
                lastError = String(cString: strerror(errno)); close(fd); continue
            }
            do {
                try wait(fd: fd, events: Int16(POLLOUT), deadline: deadline, stage: "connecting")
            } catch {
                close(fd); throw error
            }
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length)
            if soError == 0 { return fd }
            lastError = String(cString: strerror(soError))
            close(fd)
        }
        throw .connect("\(target.host):\(target.port): \(lastError)")
    }

    private func sendAll(fd: Int32, bytes: [UInt8], deadline: Double) throws(HealthcheckError) {
        var offset = 0
        while offset < bytes.count {
            try wait(fd: fd, events: Int16(POLLOUT), deadline: deadline, stage: "sending the request")
            let sent = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                throw .io(String(cString: strerror(errno)))
            }
            offset += sent
        }
    }

    private func wait(fd: Int32, events: Int16, deadline: Double, stage: String) throws(HealthcheckError) {
        while true {
            let remaining = deadline - monotonicSeconds()
            if remaining <= 0 { throw .timedOut(stage) }
            var pfd = pollfd(fd: fd, events: events, revents: 0)
            let rc = poll(&pfd, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if rc > 0 { return }
            if rc == 0 { continue }
            if errno == EINTR { continue }
            throw .io(String(cString: strerror(errno)))
        }
    }

    private func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
