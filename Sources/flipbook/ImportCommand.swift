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
            counted, left as it is). Files are stored in batches, each made durable at once (a kill \
            leaves every image stored whole or not at all; importing the same files again finishes \
            the job). Directories are read recursively; hidden files are skipped. \
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

    @Option(help: "Files made durable together, per job (0: up to 256, within the open-file limit).")
    var batch = 0

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
        let jobs = jobs > 0 ? jobs : max(1, CPULimit.usableCores)
        importer.run(files, jobs: jobs, batch: batch > 0 ? batch : BulkImport.batchSize(jobs: jobs))
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

/// The files of one `flipbook import`, stored by `jobs` threads in batches (each batch made
/// durable at once: ``ImageImport/importFiles(_:)``), counted as they go.
final class BulkImport: Sendable {
    struct Counts {
        var stored = 0
        var existing = 0
        var refused = 0
        var failed = 0
    }

    /// The most files of one batch: each holds two descriptors (its upload's temporary file and
    /// its record's) until the batch is durable, so batches also fit the descriptor limit.
    static let maxBatch = 256

    let store: ImageImport
    private let state = Mutex(Counts())

    init(store: ImageImport) {
        self.store = store
    }

    var counts: Counts { state.withLock { $0 } }

    /// Files in a batch for `jobs` threads: at most ``maxBatch``, and all of them open at once
    /// within half the soft limit of open files.
    static func batchSize(jobs: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return maxBatch }
        return max(1, min(maxBatch, Int(clamping: limit.rlim_cur) / 4 / max(1, jobs)))
    }

    /// Stores `files` on `jobs` threads, `batch` files at a time.
    func run(_ files: [String], jobs: Int, batch: Int) {
        let next = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: max(1, min(jobs, files.count))) { _ in
            while true {
                let start = next.add(batch, ordering: .relaxed).oldValue
                guard start < files.count else { return }
                importBatch(Array(files[start..<min(start + batch, files.count)]))
            }
        }
    }

    /// Stores `paths`, trying again (once a second, for up to a minute) those refused while the
    /// decode-memory budget was taken (the 429 the API answers with `Retry-After: 1`).
    private func importBatch(_ paths: [String]) {
        var pending = paths
        var attempts = 0
        while !pending.isEmpty {
            var busy: [String] = []
            for (path, outcome) in zip(pending, store.importFiles(pending)) {
                if case .failure(let refusal) = outcome, refusal.status == 429, attempts < 60 {
                    busy.append(path)
                } else {
                    count(path, outcome)
                }
            }
            pending = busy
            if !busy.isEmpty {
                attempts += 1
                sleep(1)
            }
        }
    }

    private func count(_ path: String, _ result: Result<Bool, ImageImport.Refusal>) {
        var outcome = Outcome.stored
        switch result {
        case .success(let created): if !created { outcome = .existing }
        case .failure(let error):
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

    private enum Outcome { case stored, existing, refused, failed }
}
