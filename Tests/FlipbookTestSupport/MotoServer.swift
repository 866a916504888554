import Foundation
import Glibc

/// moto's in-memory S3 server (`moto_server`, PyPI `moto[server]`) on a free loopback port, the
/// S3 endpoint of the `s3` runs of the end-to-end suite. Started once per test process; it stops
/// within a second of the process ending. Found as `$FLIPBOOK_MOTO_SERVER`, then in the
/// `.build-s3-venv` that `make test` makes, then on the `PATH`: without one the S3 tests fail
/// (they are part of the suite, not optional).
public final class MotoServer: Sendable {
    public struct Missing: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: Int
    public let logPath: String
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    public static let shared: Result<MotoServer, Missing> = Result { () throws(Missing) -> MotoServer in try start() }

    /// moto's process id, written by the watcher shell (for ``stop()``).
    private let pidFile: String

    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A tool of the S3 test virtualenv (`moto_server`, `python`), else from the `PATH`.
    public static func tool(_ name: String, environment variable: String) -> String? {
        if let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty { return path }
        let venv = repository.appendingPathComponent(".build-s3-venv/bin/" + name).path
        if FileManager.default.isExecutableFile(atPath: venv) { return venv }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let path = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// A server of the test's own (to stop and start again), on `port` or a free one. A free port
    /// is free only when it is picked: another server of the test process may bind it before
    /// moto starts (moto then exits), so a picked port is given up for another, three times.
    public static func start(port: Int? = nil) throws(Missing) -> MotoServer {
        if let port { return try MotoServer(port: port) }
        var attempt = 1
        while true {
            do {
                return try MotoServer(port: freePort())
            } catch  where attempt < 3 {
                attempt += 1
            }
        }
    }

    /// Whether moto answers on `port`: its reset endpoint, which no other server of the tests has.
    public static func answers(on port: Int) -> Bool {
        guard let response = try? HTTPTestClient(port: port).send("POST", "/moto-api/reset", body: []) else {
            return false
        }
        return response.status == 200 && response.text.contains("ok")
    }

    private init(port: Int) throws(Missing) {
        guard let moto = Self.tool("moto_server", environment: "FLIPBOOK_MOTO_SERVER") else {
            throw Missing(
                description: "moto_server not found: run `make test` (it installs moto[server] into "
                    + ".build-s3-venv) or set FLIPBOOK_MOTO_SERVER")
        }
        self.port = port
        logPath = ScratchDirectory.root + "/moto-\(self.port).log"
        pidFile = logPath + ".pid"
        unlink(pidFile)
        // A watcher shell stops moto when this process is gone (tests have no global teardown);
        // SIGKILL, because moto's server does not exit on SIGTERM.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c",
            """
            "$0" -H 127.0.0.1 -p "$1" >>"$2" 2>&1 & m=$!
            echo $m >"$4"
            trap 'kill -9 $m 2>/dev/null' EXIT
            while kill -0 "$3" 2>/dev/null && kill -0 $m 2>/dev/null; do sleep 1; done
            """, moto, String(self.port), logPath, String(getpid()), pidFile,
        ]
        // Not the test process's output: swift test reads it to its end.
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw Missing(description: "cannot start \(moto): \(error)")
        }
        for _ in 0..<300 {
            if Self.answers(on: self.port) { return }
            if !process.isRunning { break }  // moto exited: its port was taken
            usleep(100_000)
        }
        // The log goes with the scratch directory at exit: its end is part of the message.
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        throw Missing(description: "moto_server did not answer on port \(self.port) within 30 s: \(log.suffix(2000))")
    }

    /// Kills the server (its watcher exits with it); what it held is gone.
    public func stop() {
        guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return }
        kill(pid, SIGKILL)
        for _ in 0..<100 where kill(pid, 0) == 0 { usleep(50_000) }
    }

    /// Creates a bucket of its own for a test.
    public func makeBucket(_ fixed: String? = nil) throws -> String {
        let name = fixed ?? "flipbook-" + UUID().uuidString.lowercased().prefix(18)
        let response = try HTTPTestClient(port: port).send("PUT", "/" + name, body: [])
        guard response.status == 200 else {
            throw Missing(description: "moto did not create bucket \(name): \(response.status) \(response.text)")
        }
        return String(name)
    }

    public static func freePort() -> Int {
        (try? BoundLoopbackPort.free()) ?? 0
    }
}
