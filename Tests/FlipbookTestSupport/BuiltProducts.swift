import Foundation
import Glibc

/// The path of an executable product `swift build` put next to the test bundle (`flipbook`,
/// `http-bench-server`), or nil when it is not there.
public func builtProduct(_ name: String) -> String? {
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = bundle.deletingLastPathComponent()
    // Depending on the runner, arguments[0] is the .xctest binary or something inside it.
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent(name).path
        if access(candidate, X_OK) == 0 { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    return nil
}

/// What a finished process printed and how it exited.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: [UInt8]
    public var stderr: String
}

/// Runs `executable` with `arguments` to the end; stderr goes through a temporary file so that
/// neither pipe can fill up while the other is read.
public func runProcess(_ executable: String, _ arguments: [String]) throws -> ProcessResult {
    let errorPath = NSTemporaryDirectory() + "flipbook-stderr-" + UUID().uuidString
    _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: errorPath) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let output = [UInt8](out.fileHandleForReading.readDataToEndOfFile())
    process.waitUntilExit()
    let errorText = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
    return ProcessResult(status: process.terminationStatus, stdout: output, stderr: errorText)
}
