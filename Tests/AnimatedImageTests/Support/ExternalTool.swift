import FlipbookTestSupport
import Foundation

/// Runs a real encoder (gifsicle, ImageMagick, img2webp, apngasm) for tests that make their own
/// inputs. A missing tool is a failure with the package to install, never a skip.
enum ExternalTool {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func path(of tool: String) -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for directory in directories {
            let candidate = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs `tool` with `arguments`; throws with its output when it fails.
    static func run(_ tool: String, _ arguments: [String], package: String) throws {
        guard let executable = path(of: tool) else {
            throw Failure(description: "\(tool) is not installed (Debian package \(package); `make test` installs it)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(
                description: "\(tool) \(arguments.joined(separator: " ")) failed: \(String(decoding: text, as: UTF8.self))")
        }
    }

    /// A fresh directory, removed with the test process's scratch directory.
    static func temporaryDirectory() throws -> URL {
        URL(fileURLWithPath: ScratchDirectory.make("tool"))
    }
}
