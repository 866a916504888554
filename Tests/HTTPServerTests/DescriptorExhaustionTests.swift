#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import HTTPServer

/// `EMFILE` on accept: a server process with a tiny descriptor limit (`ulimit -n`, so the test
/// process itself keeps its own) must back off instead of spinning on the ready listening socket,
/// and resume accepting once descriptors are free again. The server is `http-bench-server`, which
/// `swift build` puts next to the test bundle.
@Suite(.serialized) struct DescriptorExhaustionTests {
    static func benchServerPath() -> String? {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = bundle.deletingLastPathComponent()
        // Depending on the runner, arguments[0] is the .xctest binary or something inside it.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("http-bench-server").path
            if access(candidate, X_OK) == 0 { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// CPU seconds (user + system) a process has used so far.
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state(0) ppid(1) … utime(11) stime(12).
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    @Test func acceptBacksOffWhenOutOfDescriptorsAndRecovers() throws {
        guard let server = Self.benchServerPath() else {
            Issue.record("http-bench-server not found next to \(CommandLine.arguments[0]); run `swift build` first")
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flipbook-emfile-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("payload".utf8).write(to: directory.appendingPathComponent("p.png"))

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // One event loop; 32 descriptors leave room for about 20 connections.
        process.arguments = ["-c", "ulimit -n 32 && exec \"$0\" \"$1\" 0 1", server, directory.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
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
              let port = Int(portText.filter(\.isNumber)) else {
            Issue.record("no port in \(line)"); return
        }

        // More connections than the server has descriptors for; the surplus waits in the backlog.
        var clients: [TestClient] = []
        for _ in 0..<60 { clients.append(try TestClient(port: port, timeoutSeconds: 5)) }
        // The admitted ones are served.
        try clients[0].send("GET /p.png HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try clients[0].readResponse().text == "payload")

        // While the listening socket stays readable and accept fails with EMFILE, the server must
        // sleep between attempts: a spinning loop would burn about a CPU second per second.
        usleep(200_000)
        let before = Self.cpuSeconds(process.processIdentifier)
        usleep(1_000_000)
        let after = Self.cpuSeconds(process.processIdentifier)
        if let before, let after {
            #expect(after - before < 0.5, "server used \(after - before) CPU seconds in 1 s while out of descriptors")
        } else {
            Issue.record("cannot read /proc/\(process.processIdentifier)/stat")
        }
        // The last clients are still in the backlog, unanswered.
        try clients[59].send("GET /p.png HTTP/1.1\r\nHost: t\r\n\r\n")

        // Free descriptors: the server accepts the backlog and answers the waiting request.
        clients.removeFirst(40)
        let response = try clients[19].readResponse()
        #expect(response.status == 200)
        #expect(response.text == "payload")
        clients.removeAll()
        let fresh = try TestClient(port: port)
        try fresh.send("GET /p.png HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try fresh.readResponse().text == "payload")
        #expect(process.isRunning)
    }
}
