import FlipbookTestSupport
import Foundation
import Glibc
import Testing

@testable import HTTPServer

/// The one response hook: every response — a handler's, the router's, the parser's, a timeout,
/// the 503 at the connection limit — carries the hook's lines and a request id, and is reported
/// to the hook exactly once.
@Suite("Response hook", .ownThreads)
struct ResponseHookTests {
    /// One raw exchange on a fresh connection: the response, read whole.
    func exchange(_ port: Int, _ request: String) throws -> HTTPTestResponse {
        let client = try RawHTTPClient(port: port)
        try client.send(request)
        return try client.readResponse()
    }

    @Test func everyKindOfResponseCarriesTheHookLinesAndARequestID() async throws {
        let hook = RecordingHook(constantLines: "X-Served-By: unit\r\n")
        let cases: [(String, Int, String?)] = [
            ("GET /hello HTTP/1.1\r\nHost: t\r\nX-Request-ID: trace-200\r\n\r\n", 200, "trace-200"),
            ("GET /nope HTTP/1.1\r\nHost: t\r\nX-Request-ID: trace-404\r\n\r\n", 404, "trace-404"),
            ("DELETE /hello HTTP/1.1\r\nHost: t\r\nX-Request-ID: trace-405\r\n\r\n", 405, "trace-405"),
            ("GARBAGE\r\n\r\n", 400, nil),
            ("PUT /small HTTP/1.1\r\nHost: t\r\nX-Request-ID: trace-413\r\nContent-Length: 1000\r\n\r\n", 413, "trace-413"),
            ("GET /" + String(repeating: "a", count: 400) + " HTTP/1.1\r\nHost: t\r\n\r\n", 414, nil),
            ("GET /hello HTTP/1.1\r\nHost: t\r\nX-Big: " + String(repeating: "b", count: 600) + "\r\n\r\n", 431, nil),
            ("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n", 501, nil),
            ("GET /hello HTTP/2.0\r\nHost: t\r\n\r\n", 505, nil),
        ]
        try await withTestServer(
            liveRouter(),
            configure: { configuration in
                configuration.requestIDHeader = "X-Request-ID"
                configuration.headerReadTimeout = .milliseconds(300)
                configuration.maxRequestLineBytes = 256
                configuration.maxHeaderBytes = 512
            }, hook: hook
        ) { server in
            for (request, status, echoed) in cases {
                let response = try exchange(server.port, request)
                #expect(response.status == status, "\(request.prefix(30))")
                #expect(response.header("X-Served-By") == "unit", "\(status)")
                #expect(response.header("X-Seen-Status") == String(status), "\(status)")
                let id = try #require(response.header("X-Request-ID"), "\(status)")
                if let echoed {
                    #expect(id == echoed)
                } else {
                    #expect(id.count == 16 && id.allSatisfy(\.isHexDigit), "\(status): \(id)")
                }
            }
            // A request whose head never completes: 408.
            let slow = try RawHTTPClient(port: server.port)
            try slow.send("GET /hello HTTP/1.1\r\nHost: t\r\n")
            let timedOut = try slow.readResponse()
            #expect(timedOut.status == 408)
            #expect(timedOut.header("X-Served-By") == "unit")
            #expect(timedOut.header("X-Request-ID")?.count == 16)
        }
        let records = hook.all
        #expect(records.map(\.status).sorted() == (cases.map(\.1) + [408]).sorted())
        for record in records {
            switch record.status {
            case 200: #expect(record.route == "/hello" && record.requestID.description == "trace-200")
            case 404, 405: #expect(record.route == nil && record.routeIndex == -1 && record.path != "-")
            case 400, 414, 505: #expect(record.method.rawValue == "-" && record.path == "-")
            default: break
            }
        }
        #expect(Set(records.map(\.requestID.description)).count == records.count, "ids are distinct")
    }

    @Test func theConnectionLimit503IsReportedAndCarriesTheLines() async throws {
        let hook = RecordingHook(constantLines: "X-Served-By: unit\r\n")
        try await withTestServer(
            liveRouter(),
            configure: { configuration in
                configuration.requestIDHeader = "X-Request-ID"
                configuration.maxConnections = 2
                configuration.eventLoopThreads = 1
            }, hook: hook
        ) { server in
            let held = try (0..<2).map { _ in try RawHTTPClient(port: server.port) }
            #expect(eventually(within: 10) { server.openConnections == 2 })
            let refused = try RawHTTPClient(port: server.port)
            let response = try refused.readResponse()
            #expect(response.status == 503)
            #expect(response.header("X-Served-By") == "unit")
            #expect(response.header("X-Request-ID")?.count == 16)
            #expect(response.header("Connection") == "close")
            _ = held
        }
        #expect(hook.all.map(\.status) == [503])
        #expect(hook.all.first?.bodyBytes ?? 0 > 0)
    }

    @Test func withoutARequestIDHeaderNoneIsSentOrMade() async throws {
        let hook = RecordingHook()
        try await withTestServer(liveRouter(), hook: hook) { server in
            let response = try exchange(server.port, "GET /hello HTTP/1.1\r\nHost: t\r\nX-Request-ID: x\r\n\r\n")
            #expect(response.status == 200)
            #expect(response.header("X-Request-ID") == nil)
        }
        #expect(hook.all.first?.requestID == HTTPRequestID.none)
    }

    @Test func unacceptableClientIDsAreReplaced() async throws {
        try await withTestServer(liveRouter(), configure: { $0.requestIDHeader = "X-Request-ID" }) { server in
            let long = String(repeating: "x", count: 129)
            for bad in [long, "has space", ""] {
                let response = try exchange(server.port, "GET /hello HTTP/1.1\r\nHost: t\r\nX-Request-ID: \(bad)\r\n\r\n")
                let id = try #require(response.header("X-Request-ID"))
                #expect(id != bad && id.count == 16, "\(bad)")
            }
            let exact = String(repeating: "y", count: 128)
            let kept = try exchange(server.port, "GET /hello HTTP/1.1\r\nHost: t\r\nx-request-id: \(exact)\r\n\r\n")
            #expect(kept.header("X-Request-ID") == exact)
        }
    }

    @Test func generatedIDsAreSixteenHexDigits() {
        #expect(HTTPRequestID(generated: 0x0123_4567_89ab_cdef).description == "0123456789abcdef")
        #expect(HTTPRequestID(generated: 42).description == "000000000000002a")
        #expect(HTTPRequestID.none.description == "-")
        #expect(HTTPRequestID(generated: 7) == HTTPRequestID(generated: 7))
        #expect(HTTPRequestID(generated: 7) != HTTPRequestID(generated: 8))
    }
}
