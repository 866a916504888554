import Foundation
import Glibc

/// The `flipbook` executable `swift build --build-tests` puts next to the tests.
public func flipbookExecutable() throws -> String {
    guard let path = builtProduct("flipbook") else {
        throw TestFailure("flipbook not built next to the tests (swift build --build-tests builds it)")
    }
    return path
}

/// A `flipbook serve` process on a free loopback port over `dataDirectory`, for tests of what
/// only a whole process shows (SIGKILL, signals, the environment); killed when released.
public final class ServeProcess {
    public let process = Process()
    public let port: Int
    public let client: HTTPTestClient

    /// - Parameters:
    ///   - settings: more `--set KEY=VALUE` settings.
    ///   - environment: variables that replace the test process's for the server.
    public init(dataDirectory: String, settings: [String] = [], environment: [String: String] = [:]) throws {
        let flipbook = try flipbookExecutable()
        port = try BoundLoopbackPort.free()
        process.executableURL = URL(fileURLWithPath: flipbook)
        process.arguments =
            [
                "serve", "--host", "127.0.0.1", "--port", "\(port)", "--data-dir", dataDirectory,
                "--log-level", "warning", "--set", "log.accessLog=false",
            ] + settings.flatMap { ["--set", $0] }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        client = HTTPTestClient(port: port)
        let deadline = Date().addingTimeInterval(60)
        while (try? client.get("/healthz").status) != 200 {
            guard Date() < deadline, process.isRunning else { throw TestFailure("flipbook serve did not start") }
            usleep(50_000)
        }
    }

    /// Sends `signal` to the process.
    public func kill(_ signal: Int32 = SIGKILL) { Glibc.kill(process.processIdentifier, signal) }

    deinit {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
