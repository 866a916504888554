import ArgumentParser
import FlipbookService
import FoundationEssentials
import Glibc

/// `flipbook healthcheck`: one HTTP/1.1 GET to the server on this machine's loopback, exit 0 on
/// 200 and 1 on anything else (Docker reads 0 as healthy, 1 as unhealthy and reserves the rest).
/// The runtime image has no curl; this needs nothing beyond libc.
struct HealthcheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "healthcheck",
        abstract: "GET a health URL of the server on loopback; exit 0 on HTTP 200, 1 otherwise.")

    @Option(
        help: ArgumentHelp(
            "http://127.0.0.1:PORT/PATH (or localhost) to GET.",
            discussion: "Default: http://127.0.0.1:$FLIPBOOK_SERVER_PORT/healthz (8080 when unset)."))
    var url: String?

    @Option(help: "Give up on each of connect, send and receive after this many seconds.")
    var timeout: Double = 3

    func run() throws {
        let port = ProcessInfo.processInfo.environment["FLIPBOOK_SERVER_PORT"].flatMap { UInt16($0) } ?? 8080
        let url = self.url ?? "http://127.0.0.1:\(port)/healthz"
        guard timeout > 0, timeout.isFinite else { unhealthy("--timeout must be a positive number of seconds") }
        guard let match = url.wholeMatch(of: /http:\/\/(127\.0\.0\.1|localhost):(\d{1,5})(\/[^\s]*)?/),
            let targetPort = UInt16(match.2), targetPort > 0
        else {
            unhealthy("--url must be http://127.0.0.1:PORT/PATH (got \(url))")
        }
        let status = get(port: targetPort, path: String(match.3 ?? "/"))
        guard status == 200 else { unhealthy("\(url) answered \(status)") }
        print("healthy: \(url) answered 200")
    }

    /// The status code of `GET path` on 127.0.0.1:`port`; exits unhealthy when there is none.
    private func get(port: UInt16, path: String) -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { unhealthy("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {  // SO_SNDTIMEO bounds connect(2) too
            setsockopt(fd, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            unhealthy(errno == EINPROGRESS ? "timed out connecting" : "cannot connect: \(String(cString: strerror(errno)))")
        }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            unhealthy("cannot send: \(String(cString: strerror(errno)))")
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while !received.contains(UInt8(ascii: "\n")), received.count < 8192 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { unhealthy("timed out waiting for the response") }
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        let line = String(decoding: received.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        guard let status = line.wholeMatch(of: /HTTP\/1\.[01] (\d{3})( .*)?/).flatMap({ Int($0.1) }) else {
            unhealthy("bad response: status line '\(line.prefix(80))'")
        }
        return status
    }

    private func unhealthy(_ message: String) -> Never {
        StandardStreams.write("unhealthy: \(message)\n", to: STDERR_FILENO)
        Glibc.exit(1)
    }
}
