import FlipbookTestSupport
import Foundation
import Glibc
import Testing

@testable import HTTPServer

/// Bodies in files, sent with `sendfile`: whole, after a head sent with `MSG_MORE`, pipelined,
/// larger than the socket's buffer (so the send stops and resumes), and not at all for HEAD.
@Suite("File bodies", .ownThreads)
struct FileBodyTests {
    /// A temporary file holding `bytes`, open for reading; the owner closes it.
    final class TempFile: @unchecked Sendable {
        let fd: Int32
        init(_ bytes: [UInt8]) throws {
            let path = NSTemporaryDirectory() + "file-body-" + UUID().uuidString
            fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0o600)
            unlink(path)
            guard fd >= 0, bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
                throw TestFailure("temp file")
            }
        }
        deinit { close(fd) }
    }

    static func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 / 251) } }

    @Test func fileBodiesAreSentWholeInOrderAndNotForHEAD() async throws {
        let small = Self.pattern(10_000)
        let large = Self.pattern(3_000_000)  // more than a loopback socket buffer takes at once
        let file = try TempFile(small + large)
        var router = Router()
        router.get("/small") { _, _ in
            .now(
                HTTPResponse(
                    headers: ["Content-Type": "image/png"],
                    fileBody: HTTPFileBody(descriptor: file.fd, offset: 0, count: small.count, owner: file)))
        }
        let prepared = HTTPPreparedResponse(
            headers: ["ETag": "\"l\""],
            fileBody: HTTPFileBody(
                descriptor: file.fd, offset: small.count,
                count: large.count, owner: file))
        router.get("/large") { _, _ in .now(HTTPResponse(prepared)) }
        try await withTestServer(router) { server in
            let client = try RawHTTPClient(port: server.port, timeoutSeconds: 20)
            try client.send(
                "GET /small HTTP/1.1\r\nHost: t\r\n\r\nGET /large HTTP/1.1\r\nHost: t\r\n\r\n"
                    + "HEAD /large HTTP/1.1\r\nHost: t\r\n\r\nGET /small HTTP/1.1\r\nHost: t\r\n\r\n")
            let first = try client.readResponse()
            #expect(first.status == 200 && first.body == small && first.header("Content-Length") == "10000")
            let second = try client.readResponse()
            #expect(second.body == large && second.header("ETag") == "\"l\"")
            let head = try client.readResponse(head: true)
            #expect(head.header("Content-Length") == String(large.count) && head.body.isEmpty)
            let last = try client.readResponse()
            #expect(last.body == small)

            // A client that leaves in the middle of a large file body costs its connection only.
            for _ in 0..<5 {
                let leaving = try RawHTTPClient(port: server.port)
                try leaving.send("GET /large HTTP/1.1\r\nHost: t\r\n\r\n")
                var linger = linger(l_onoff: 1, l_linger: 0)  // close with a reset, at once
                setsockopt(leaving.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
            }
            let after = try RawHTTPClient(port: server.port)
            try after.send("GET /small HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try after.readResponse().body == small)
        }
    }
}
