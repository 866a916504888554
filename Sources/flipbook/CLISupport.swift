import AnimatedImage
import ArgumentParser
import FlipbookService
import FoundationEssentials
import Glibc
import SystemPackage
import SystemResources

/// Exit statuses of the CLI: 1 when the image cannot be served (unsupported, damaged, over a
/// limit, no such frame), 2 when a file cannot be read or written.
enum CLIExit {
    static let badImage: Int32 = 1
    static let ioFailure: Int32 = 2
}

/// Prints a one-line message on stderr and exits with `status`.
func fail(_ message: String, status: Int32) -> Never {
    StandardStreams.write("flipbook: \(message)\n", to: STDERR_FILENO)
    exit(status)
}

/// Reads a whole file, or exits with status 2 and a one-line reason.
func readFile(_ path: String) -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
        let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
        fail("\(path) \(reason)", status: CLIExit.ioFailure)
    }
    return [UInt8](data)
}

/// Writes a whole file atomically, or exits with status 2.
func writeFile(_ bytes: [UInt8], to path: String) {
    do {
        try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
    } catch {
        fail("cannot write \(path): \(ErrorText.of(error))", status: CLIExit.ioFailure)
    }
}

/// The image file a command reads, and the limits it is opened within (`--max-…`).
struct ImageInput: ParsableArguments {
    @Argument(help: "A GIF, PNG/APNG or WebP file.")
    var file: String

    @OptionGroup var limits: LimitOptions

    /// The image, or exit with status 1 and the reason (2 when the file cannot be read).
    func open(verification: AnimatedImage.Verification) -> AnimatedImage {
        let bytes = readFile(file)
        do {
            return try AnimatedImage(
                bytes: bytes, limits: limits.decodeLimits, verification: verification, backgroundDecoding: true)
        } catch {
            refuse(error)
        }
    }

    /// Exits with status 1: the image cannot be served (`error` says why).
    func refuse(_ error: any Error) -> Never {
        fail("\(file): \(error)", status: CLIExit.badImage)
    }
}

/// The directory a command writes its files into (`--output DIR`, `-o DIR`), created if need be.
struct OutputDirectory: ParsableArguments {
    @Option(name: [.customShort("o"), .customLong("output")], help: "The directory to write into (created if need be).")
    var path: String

    /// Creates the directory (and its parents) when missing, or exits with status 2.
    func create() {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            fail("cannot create \(path): \(ErrorText.of(error))", status: CLIExit.ioFailure)
        }
    }

    /// The path of the file `name` in the directory.
    func file(_ name: String) -> String { FilePath(path).appending(name).string }
}

/// The image limits, overridable on the command line.
struct LimitOptions: ParsableArguments {
    @Option(help: "Largest accepted file, in bytes.")
    var maxFileBytes = DecodeLimits.default.maxFileBytes
    @Option(help: "Largest canvas or frame, in pixels.")
    var maxFramePixels = DecodeLimits.default.maxFramePixels
    @Option(help: "Most frames in one image.")
    var maxFrames = DecodeLimits.default.maxFrames
    @Option(help: "Most pixels over all frames together.")
    var maxTotalPixels = DecodeLimits.default.maxTotalPixels
    @Option(help: "Longest canvas side, in pixels.")
    var maxDimension = DecodeLimits.default.maxDimension
    @Option(help: "Most memory one decode may need besides the file, in bytes (default: no limit).")
    var maxDecodeBytes = DecodeLimits.default.maxDecodeBytes

    var decodeLimits: DecodeLimits {
        DecodeLimits(
            maxFileBytes: maxFileBytes, maxFramePixels: maxFramePixels,
            maxFrames: maxFrames, maxTotalPixels: maxTotalPixels, maxDimension: maxDimension,
            maxDecodeBytes: maxDecodeBytes)
    }
}

/// The settings `flipbook serve` and `flipbook import` read: `config` (else Config/flipbook.json
/// when present), then `FLIPBOOK_*` variables, then `assignments` (`--set KEY=VALUE`), then `flags`
/// (the commands' named options). Exits 2 with the reason when they are not valid.
func loadSettings(config: String?, assignments: [String], flags: [String: String]) async throws -> SettingsLoader.Loaded {
    var overrides: [String: String] = [:]
    for assignment in assignments {
        guard let equals = assignment.firstIndex(of: "=") else {
            throw ValidationError("--set expects KEY=VALUE, got '\(assignment)'")
        }
        overrides[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
    }
    overrides.merge(flags) { $1 }
    do {
        return try await SettingsLoader(configPath: config, overrides: overrides).load()
    } catch {
        StandardStreams.write("flipbook: \(error)\n", to: STDERR_FILENO)
        throw ExitCode(2)
    }
}
