import FlipbookTestSupport
import Foundation
import Glibc
import Testing

@testable import HTTPServer

/// `EMFILE` on accept: a server process with a tiny descriptor limit (`ulimit -n`, so the test
/// process itself keeps its own) must back off instead of spinning on the ready listening socket
/// (it says so in its log), and resume accepting once descriptors are free again. The server is `http-bench-server`, which
/// `swift build` puts next to the test bundle.
@Suite(.serialized, .ownThreads) struct DescriptorExhaustionTests {
    @Test func acceptBacksOffWhenOutOfDescriptorsAndRecovers() throws {
        guard let server = builtProduct("http-bench-server") else {
            Issue.record("http-bench-server not found next to \(CommandLine.arguments[0]); run `swift build` first")
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flipbook-emfile-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("payload".utf8).write(to: directory.appendingPathComponent("p.png"))

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // One event loop; 32 descriptors leave room for about 20 connections. Its log goes to a file.
        let log = directory.appendingPathComponent("server.log").path
        process.arguments = ["-c", "ulimit -n 32 && exec \"$0\" \"$1\" 0 1 2>\"$2\"", server, directory.path, log]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer {
            // SIGKILL: the child inherits the test thread's signal mask, where SIGTERM may be blocked.
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        // "http-bench-server: 1 payloads on port P, 1 loops"
        var line = ""
        let outputFD = output.fileHandleForReading.fileDescriptor
        while !line.contains("loops") {
            var poller = pollfd(fd: outputFD, events: Int16(POLLIN), revents: 0)
            var byte: UInt8 = 0
            guard poll(&poller, 1, 10_000) == 1, read(outputFD, &byte, 1) == 1 else {
                Issue.record("the server did not start: \(line)"); return
            }
            line.unicodeScalars.append(Unicode.Scalar(byte))
        }
        guard let portText = line.split(separator: " ").drop(while: { $0 != "port" }).dropFirst().first,
            let port = Int(portText.filter(\.isNumber))
        else {
            Issue.record("no port in \(line)"); return
        }

        // More connections than the server has descriptors for; the surplus waits in the backlog.
        var clients: [RawHTTPClient] = []
        for _ in 0..<60 { clients.append(try RawHTTPClient(port: port, timeoutSeconds: 5)) }
        // The admitted ones are served.
        try clients[0].send("GET /p.png HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try clients[0].readResponse().text == "payload")

        // accept failed with EMFILE while the listening socket stays readable: the server took
        // the back-off path (the listener rests for a while instead of being retried at once),
        // which is the one branch that logs this.
        #expect(
            eventually(within: 30) {
                (try? String(contentsOfFile: log, encoding: .utf8))?.contains("accept: out of resources, backing off") == true
            }, "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "no log")")
        // The last clients are still in the backlog, unanswered.
        try clients[59].send("GET /p.png HTTP/1.1\r\nHost: t\r\n\r\n")

        // Free descriptors: the server accepts the backlog and answers the waiting request.
        clients.removeFirst(40)
        let response = try clients[19].readResponse()
        #expect(response.status == 200)
        #expect(response.text == "payload")
        clients.removeAll()
        let fresh = try RawHTTPClient(port: port)
        try fresh.send("GET /p.png HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try fresh.readResponse().text == "payload")
        #expect(process.isRunning)
    }
}
