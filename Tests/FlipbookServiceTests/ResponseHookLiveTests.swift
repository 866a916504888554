import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// Every response the service sends — its handlers', the router's 404/405, the parser's
/// 400/408/413/414/431/501/505 and the 503 at the connection limit — carries `X-Served-By` and
/// `X-Request-ID`, appears in the access log and is counted in the metrics (raw sockets, so the
/// malformed requests reach the server as sent).
@Suite("Every response decorated", .ownThreads)
struct ResponseHookLiveTests {
    static let cases: [(request: String, status: Int, id: String?)] = [
        ("GET /healthz HTTP/1.1\r\nHost: t\r\nX-Request-ID: id-200\r\nConnection: close\r\n\r\n", 200, "id-200"),
        ("GET /nope HTTP/1.1\r\nHost: t\r\nX-Request-ID: id-404\r\nConnection: close\r\n\r\n", 404, "id-404"),
        (
            "POST /healthz HTTP/1.1\r\nHost: t\r\nX-Request-ID: id-405\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", 405,
            "id-405"
        ),
        ("NOT A REQUEST\r\n\r\n", 400, nil),
        ("PUT /images/clip HTTP/1.1\r\nHost: t\r\nX-Request-ID: id-413\r\nContent-Length: 5000\r\n\r\n", 413, "id-413"),
        ("GET /" + String(repeating: "u", count: 600) + " HTTP/1.1\r\nHost: t\r\n\r\n", 414, nil),
        ("GET /healthz HTTP/1.1\r\nHost: t\r\nX-Pad: " + String(repeating: "p", count: 1200) + "\r\n\r\n", 431, nil),
        ("POST /images HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n", 501, nil),
        ("GET /healthz HTTP/3.0\r\nHost: t\r\n\r\n", 505, nil),
        ("GET /healthz HTTP/1.1\r\nHost: t\r\n", 408, nil),  // the head never completes
    ]

    @Test func everyStatusCarriesTheHeadersIsLoggedAndCounted() async throws {
        let logPath = TestService.temporaryDirectory() + "/access.log"
        let service = try TestService { settings in
            settings.log.accessLog = true
            settings.log.accessLogFile = logPath
            settings.log.format = "json"
            settings.server.headerTimeoutSeconds = 0.5
            settings.server.maxRequestLineBytes = 512
            settings.server.maxHeaderBytes = 1024
            settings.server.maxUploadBytes = 1000
        }
        var ids: [Int: String] = [:]
        for (request, status, echoed) in Self.cases {
            let raw = try service.client.exchange(Array(request.utf8))
            let response = try RawHTTPClient.parse(raw, method: "GET")
            #expect(response.status == status, "\(request.prefix(24))")
            #expect(response.header("X-Served-By") == "test-instance", "\(status)")
            let id = try #require(response.header("X-Request-ID"), "\(status)")
            if let echoed { #expect(id == echoed) } else { #expect(id.count == 16, "\(status): \(id)") }
            ids[status] = id
        }
        let metrics = try service.client.get("/metrics").text
        for status in [404, 405] {
            #expect(
                metrics.contains("route=\"unmatched\",status=\"\(status)\"} 1")
                    || metrics.contains("route=\"/healthz\",status=\"\(status)\"} 1"), "\(status)")
        }
        for status in [400, 408, 414, 431, 505] {
            #expect(
                metrics.contains("flipbook_http_requests_total{method=\"-\",route=\"unmatched\",status=\"\(status)\"} 1"),
                "\(status)")
        }
        #expect(metrics.contains("flipbook_http_requests_total{method=\"GET\",route=\"/healthz\",status=\"200\"} 1"))
        #expect(metrics.contains("flipbook_http_request_duration_seconds_count{route=\"/healthz\"}"))
        await service.stop()

        let lines = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n")
        let records = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] }
        #expect(records.count == lines.count, "every line is a JSON object")
        for (status, id) in ids {
            let matching = records.filter { $0["requestID"] == id }
            #expect(matching.count == 1, "\(status) logged once")
            #expect(matching.first?["status"] == String(status))
            #expect(matching.first?["component"] == "access" && matching.first?["msg"] == "request")
        }
    }

    @Test func theConnectionLimit503IsDecoratedLoggedAndCounted() async throws {
        let logPath = TestService.temporaryDirectory() + "/access.log"
        let service = try TestService { settings in
            settings.log.accessLog = true
            settings.log.accessLogFile = logPath
            settings.server.maxConnections = 2
        }
        let held = try (0..<2).map { _ in try RawHTTPClient(port: service.server.port, timeoutSeconds: 10) }
        // Both held connections are registered once a request on them has been answered.
        for connection in held {
            try connection.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try connection.readResponse().status == 200)
        }
        let refused = try RawHTTPClient(port: service.server.port, timeoutSeconds: 10)
        let response = try refused.readResponse()
        #expect(response.status == 503)
        #expect(response.header("X-Served-By") == "test-instance")
        let id = try #require(response.header("X-Request-ID"))
        withExtendedLifetime(held) {}
        await service.stop()
        let log = try String(contentsOfFile: logPath, encoding: .utf8)
        let line = try #require(log.split(separator: "\n").first { $0.contains("requestID=\(id) ") })
        #expect(line.contains("status=503"))
        #expect(line.contains(" method=- ") && line.contains(" path=- "))
    }
}
