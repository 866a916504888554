import Dispatch
import FlipbookTestSupport
import Foundation
import HTTPServer
import ServiceTestSupport
import Synchronization
import Testing

@testable import FlipbookService

/// The access log: every line of a graceful stop is written exactly once; a stalled writer makes
/// lines drop (counted), never a request wait; the formats are swift-log's.
@Suite("Access log", .ownThreads)
struct AccessLogTests {
    static func record(id: String, loop: Int = 0, status: Int = 200, path: String = "/frames/abc/1") -> HTTPAccessRecord {
        var headers = HTTPHeaders()
        headers.add(name: "X-Request-ID", value: id)
        return HTTPAccessRecord(
            method: .GET, path: path, route: "/frames/:id/:index", routeIndex: 0,
            requestHeaders: headers, requestID: HTTPRequestID(generated: UInt64(id.hashValue.magnitude)),
            remoteAddress: HTTPPeerAddress(ip: "127.0.0.1", port: 1), connectionID: 1, loop: loop,
            status: status, bodyBytes: 1234, duration: .microseconds(56_789))
    }

    @Test func everyRequestOfABurstIsLoggedExactlyOnceAfterAGracefulStop() async throws {
        let logPath = TestService.temporaryDirectory() + "/access.log"
        let service = try TestService { settings in
            settings.log.accessLog = true
            settings.log.accessLogFile = logPath
        }
        // Four keep-alive connections, each pipelining its share of a burst of 600 requests.
        let port = service.server.port
        let perConnection = 150
        try await withThrowingTaskGroup(of: Void.self) { group in
            for connection in 0..<4 {
                group.addTask {
                    // The timeout only turns a hang into a failure: generous, for a loaded machine.
                    let raw = try RawHTTPClient(port: port, timeoutSeconds: 60)
                    var burst = ""
                    for n in 0..<perConnection {
                        let path = n % 5 == 4 ? "/nope" : "/healthz"
                        burst += "GET \(path) HTTP/1.1\r\nHost: t\r\nX-Request-ID: burst-\(connection)-\(n)\r\n\r\n"
                    }
                    try raw.send(burst)
                    for _ in 0..<perConnection { _ = try raw.readResponse() }
                }
            }
            try await group.waitForAll()
        }
        await service.stop()
        let lines = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n")
        var seen: [String: Int] = [:]
        for line in lines {
            guard let range = line.range(of: "requestID=") else { continue }
            let id = line[range.upperBound...].prefix { $0 != " " }
            seen[String(id), default: 0] += 1
        }
        for connection in 0..<4 {
            for n in 0..<perConnection {
                #expect(seen["burst-\(connection)-\(n)"] == 1, "burst-\(connection)-\(n)")
            }
        }
        #expect(lines.count == 4 * perConnection, "nothing else, nothing twice")
        #expect(lines.allSatisfy { $0.hasSuffix(" [FlipbookService] request") })
    }

    @Test func aStalledWriterDropsAndCountsLinesAndNoAppendWaits() throws {
        let directory = TestService.temporaryDirectory()
        let fifo = directory + "/stalled.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        // Open the reading end (without reading) so the log can open the writing end.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        var tuning = AccessLog.Tuning()
        tuning.chunkBytes = 4096
        tuning.chunksPerLoop = 2
        let log = try AccessLog(destination: .file(fifo), format: .text, loops: 2, tuning: tuning)
        // Far more than the pipe (64 KiB) and the pool (four 4 KiB chunks) hold.
        let total = 20_000
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for n in 0..<total { log.append(AccessLogLine(record: Self.record(id: "s\(n)", loop: n % 2), client: "10.0.0.1")) }
            finished.signal()
        }
        // A time bound only so that a blocking append fails the test instead of hanging it.
        #expect(finished.wait(timeout: .now() + 60) == .success, "appends never wait for the writer")
        let stalled = log.counts
        #expect(stalled.linesDropped > 0)
        #expect(stalled.linesWritten + stalled.linesDropped <= total)

        // Unblock the writer: drain the pipe while the log closes.
        let drained = DrainedBytes()
        let draining = Thread { drained.drain(reader) }
        draining.start()
        log.close()
        #expect(drained.waitForEnd())
        let counts = log.counts
        #expect(counts.linesWritten + counts.linesDropped == total)
        #expect(counts.linesDropped >= stalled.linesDropped)
        let text = drained.text
        #expect(text.split(separator: "\n").count == counts.linesWritten)
        #expect(text.split(separator: "\n").allSatisfy { $0.hasSuffix("[FlipbookService] request") })
    }

    @Test func textLinesLookLikeSwiftLogsAndEscapeControlCharacters() throws {
        let path = TestService.temporaryDirectory() + "/text.log"
        let log = try AccessLog(destination: .file(path), format: .text, loops: 1)
        log.append(AccessLogLine(record: Self.record(id: "a", path: "/frames/x/1\nforged line"), client: "10.1.2.3"))
        log.close()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 1)
        let line = String(lines[0])
        // 2026-11-23T21:20:00+0000 info flipbook: bytes=1234 client=… [FlipbookService] request
        #expect(
            line.range(
                of:
                    #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} info flipbook: bytes=1234 client=10\.1\.2\.3 component=access method=GET ms=56\.79 path=/frames/x/1\\nforged line requestID=[0-9a-f]{16} status=200 \[FlipbookService\] request$"#,
                options: .regularExpression) != nil, "\(line)")
    }

    @Test func jsonLinesCarryTheSameFields() throws {
        let path = TestService.temporaryDirectory() + "/json.log"
        let log = try AccessLog(destination: .file(path), format: .json, loops: 1)
        log.append(AccessLogLine(record: Self.record(id: "b", path: "/q\"uote\\"), client: "::1"))
        log.close()
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
        #expect(object["level"] == "info" && object["label"] == "flipbook" && object["msg"] == "request")
        #expect(object["component"] == "access" && object["method"] == "GET" && object["status"] == "200")
        #expect(object["bytes"] == "1234" && object["ms"] == "56.79" && object["client"] == "::1")
        #expect(object["path"] == "/q\"uote\\")
        #expect(object["requestID"]?.count == 16)
        #expect(object["ts"]?.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil)
    }

    @Test func everyControlByteIsEscapedAndALongPathIsCutInBothFormats() throws {
        // Every control byte and DEL, a quote and a backslash, then enough to pass the cut.
        let controls = String(decoding: Array(0x01..<0x20) + [0x7F, 0x22, 0x5C], as: UTF8.self)
        let path = "/p" + controls + String(repeating: "é", count: 1500)
        let keptBytes = Array(path.utf8.prefix(AccessLogFormat.maximumPathBytes))
        let kept = String(decoding: keptBytes, as: UTF8.self)
        // A chunk smaller than one line: the line is still written whole.
        var tuning = AccessLog.Tuning()
        tuning.chunkBytes = 512
        for format in [AccessLogFormat.text, .json] {
            let file = TestService.temporaryDirectory() + "/escapes.log"
            let log = try AccessLog(destination: .file(file), format: format, loops: 1, tuning: tuning)
            log.append(AccessLogLine(record: Self.record(id: "e", path: path), client: "10.0.0.9"))
            log.append(AccessLogLine(record: Self.record(id: "f", status: 404), client: "10.0.0.9"))
            log.close()
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == 3 && lines[2].isEmpty, "two lines, each ended by a newline")
            if format == .json {
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: String])
                #expect(object["path"] == kept + "…")
                #expect(object["client"] == "10.0.0.9" && object["status"] == "200")
                let second = try #require(
                    try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: String])
                #expect(second["status"] == "404" && second["bytes"] == "1234" && second["path"] == "/frames/abc/1")
            } else {
                var expected = "/p"
                for byte in controls.utf8 {
                    switch byte {
                    case 0x09: expected += "\\t"
                    case 0x0A: expected += "\\n"
                    case 0x0D: expected += "\\r"
                    case 0x22, 0x5C: expected += String(UnicodeScalar(byte))
                    default: expected += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
                    }
                }
                expected += String(decoding: keptBytes.dropFirst(2 + controls.utf8.count), as: UTF8.self) + "…"
                #expect(lines[0].contains(" path=\(expected) requestID="))
                #expect(lines[1].contains(" bytes=1234 client=10.0.0.9 component=access method=GET ms=56.79 path=/frames/abc/1 "))
                #expect(lines[1].hasSuffix(" status=404 [FlipbookService] request"))
            }
        }
    }

    @Test func reopenFollowsARotatedFile() throws {
        let directory = TestService.temporaryDirectory()
        let path = directory + "/access.log"
        let log = try AccessLog(destination: .file(path), format: .text, loops: 1)
        log.append(AccessLogLine(record: Self.record(id: "before"), client: "-"))
        log.flush()
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")
        log.reopen()
        log.flush()
        log.append(AccessLogLine(record: Self.record(id: "after", status: 404), client: "-"))
        log.close()
        let rotated = try String(contentsOfFile: path + ".1", encoding: .utf8)
        let fresh = try String(contentsOfFile: path, encoding: .utf8)
        #expect(rotated.split(separator: "\n").count == 1 && rotated.contains("status=200"))
        #expect(fresh.split(separator: "\n").count == 1 && fresh.contains("status=404"))
    }
}

/// Reads a pipe on its own thread until every writer has closed it.
final class DrainedBytes: Sendable {
    private let bytes = Mutex<[UInt8]>([])
    private let done = DispatchSemaphore(value: 0)

    func drain(_ fd: Int32) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                bytes.withLock { $0 += chunk[0..<n] }
            } else if n == 0 {
                break  // end of file: the log closed its end
            } else {
                usleep(1000)  // EAGAIN: nothing yet
            }
        }
        done.signal()
    }

    /// Waits for the end of file (a time bound only to fail instead of hang).
    func waitForEnd() -> Bool {
        done.wait(timeout: .now() + 60) == .success
    }

    var text: String {
        bytes.withLock { String(decoding: $0, as: UTF8.self) }
    }
}
