import ArgumentParser
import Dispatch
import FlipbookService
import FoundationEssentials
import Glibc
import Logging
import Synchronization
import SystemResources

/// `flipbook import`: stores image files the way `POST /images` stores an upload — the same
/// settings, limits and verification, the same record under the same content id — without a
/// server, for bulk loads (moving a library in, a benchmark's million images). Safe while servers
/// use the same data directory or bucket: it takes the same locks.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Store image files as POST /images would, without a server.",
        discussion: """
            Each file is checked and recorded exactly as an upload of its bytes: refused when it is not \
            a GIF, PNG/APNG or WebP image, breaks a limit (limits.*) or is larger than \
            server.maxUploadBytes; stored under the SHA-256 of its bytes otherwise (already stored: \
            counted, left as it is). Directories are read recursively; hidden files are skipped. \
            Settings as for `flipbook serve` (Config/flipbook.json or --config, FLIPBOOK_* variables, \
            --data-dir, --set). Prints one line per refused file on stderr and a summary on stdout; \
            exits 1 when a file was refused, 2 when storage failed.
            """)

    @Option(help: "The JSON settings file (default: Config/flipbook.json when present).")
    var config: String?

    @Option(name: .customLong("data-dir"), help: "Where images are stored (storage.dataDir).")
    var dataDirectory: String?

    @Option(name: .customLong("set"), help: ArgumentHelp("KEY=VALUE for any setting; repeatable.", valueName: "key=value"))
    var assignments: [String] = []

    @Option(help: "Files stored at once (0: one per usable CPU).")
    var jobs = 0

    @Flag(help: "The summary as one JSON object.")
    var json = false

    @Argument(help: "Image files, or directories of them.")
    var paths: [String]

    func run() async throws {
        let settings = try await loadSettings(
            config: config, assignments: assignments, flags: dataDirectory.map { ["storage.dataDir": $0] } ?? [:]
        ).settings
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let logger = Logger(label: "flipbook.import")
        let store: ImageImport
        do {
            store = try ImageImport(settings: settings, logger: logger)
        } catch {
            fail("cannot open the storage: \(error)", status: CLIExit.ioFailure)
        }
        let files = Self.files(in: paths)
        let importer = BulkImport(store: store)
        let started = Date()
        importer.run(files, jobs: jobs > 0 ? jobs : max(1, CPULimit.usableCores))
        let counts = importer.counts
        let seconds = Date().timeIntervalSince(started)
        if json {
            print(
                "{\"files\":\(files.count),\"stored\":\(counts.stored),\"existing\":\(counts.existing),"
                    + "\"refused\":\(counts.refused),\"failed\":\(counts.failed),\"seconds\":\(DecimalText.fixed(seconds, places: 3))}"
            )
        } else {
            print(
                "\(counts.stored) stored, \(counts.existing) already stored, \(counts.refused) refused, "
                    + "\(counts.failed) failed, of \(files.count) file(s) in \(DecimalText.fixed(seconds, places: 1)) s")
        }
        if counts.failed > 0 { throw ExitCode(CLIExit.ioFailure) }
        if counts.refused > 0 { throw ExitCode(CLIExit.badImage) }
    }

    /// The regular files of `paths`, directories read recursively, hidden entries skipped, in order.
    static func files(in paths: [String]) -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                fail("\(path) does not exist", status: CLIExit.ioFailure)
            }
            guard isDirectory else {
                files.append(path)
                continue
            }
            var found: [String] = []
            for relative in (try? FileManager.default.subpathsOfDirectory(atPath: path)) ?? [] {
                guard !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) else { continue }
                let file = path + "/" + relative
                // The entry itself (lstat), as the directory walk reports it: a link is not a file.
                let type = (try? FileManager.default.attributesOfItem(atPath: file))?[.type] as? FileAttributeType
                if type == .typeRegular { found.append(file) }
            }
            files += found.sorted()
        }
        return files
    }
}

/// The files of one `flipbook import`, stored by `jobs` threads, counted as they go.
final class BulkImport: Sendable {
    struct Counts {
        var stored = 0
        var existing = 0
        var refused = 0
        var failed = 0
    }

    let store: ImageImport
    private let state = Mutex(Counts())

    init(store: ImageImport) {
        self.store = store
    }

    var counts: Counts { state.withLock { $0 } }

    func run(_ files: [String], jobs: Int) {
        let next = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: max(1, min(jobs, files.count))) { _ in
            while true {
                let i = next.add(1, ordering: .relaxed).oldValue
                guard i < files.count else { return }
                importFile(files[i])
            }
        }
    }

    private func importFile(_ path: String) {
        var outcome = Outcome.stored
        do throws(ImageImport.Refusal) {
            if try !storeRetryingWhenBusy(path) { outcome = .existing }
        } catch {
            outcome = error.isTheFiles ? .refused : .failed
            let what = outcome == .refused ? "refused" : "not stored"
            StandardStreams.write("flipbook: \(path): \(what) (\(error.status)): \(error.detail)\n", to: STDERR_FILENO)
        }
        state.withLock { counts in
            switch outcome {
            case .stored: counts.stored += 1
            case .existing: counts.existing += 1
            case .refused: counts.refused += 1
            case .failed: counts.failed += 1
            }
        }
    }

    /// Stores `path`, waiting and trying again (for up to a minute) while the decode-memory budget
    /// is taken (the 429 the API answers with `Retry-After: 1`).
    private func storeRetryingWhenBusy(_ path: String) throws(ImageImport.Refusal) -> Bool {
        var attempts = 0
        while true {
            do throws(ImageImport.Refusal) {
                return try store.importFile(path)
            } catch  where error.status == 429 && attempts < 60 {
                attempts += 1
                sleep(1)
            }
        }
    }

    private enum Outcome { case stored, existing, refused, failed }
}
