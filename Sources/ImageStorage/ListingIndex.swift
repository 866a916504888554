import CSQLite
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import Synchronization
import SystemResources

/// The ids stored in a data directory (`storage.backend = fs`) in byte order, each with the
/// summary its `GET /images` entry shows (``ImageSummary``), on disk beside the records, so that
/// a page of `GET /images` costs its own size and reads no record: an SQLite table (a B-tree) in
/// `index/`, shared by the replicas that share the directory.
///
/// **What it promises**: every id with a record is in it, and a summary it holds is the summary
/// of the record on disk. A writer, holding the record's lock, marks the id's summary unknown
/// (adding the id when new) and commits that durably before it changes the record, then sets the
/// summary of what it wrote (a commit that need not be durable: losing it leaves the summary
/// unknown, which is safe); a delete marks it unknown before it removes the record and removes
/// the id after. An id whose summary is unknown — a writer under way, one that crashed, a
/// rebuilt index — is listed from its record (or skipped and removed when it has none:
/// ``FileSystemBackend/listImages(after:limit:)``), and its summary filled in the background
/// (``FileSystemBackend/fillSummaries(batch:crashAfter:)``). Each change is an SQLite transaction
/// in WAL mode: durable (`synchronous = FULL`) when it returns where it must be, rolled back whole
/// by a crash. The changes of concurrent writers are committed together (``GroupCommits``). WAL
/// mode's shared memory ties the processes sharing the index to one host (measured on the
/// benchmark machine, a commit costs 3.6 ms in WAL mode and 8–14 ms with a rollback journal,
/// which would have allowed a network file system; replicas on several hosts use S3).
///
/// **Generations**: `index/CURRENT` names the database in use, `ids-<uuid>.sqlite`. One that is
/// missing, of another format, not marked complete, or that SQLite finds damaged is rebuilt from
/// the records into a new generation, which `CURRENT` then names (a rename: atomic, so a crash
/// leaves the old name or the new, complete one). Every process notices the new name on its next
/// use (one `stat`) and reopens; a generation nobody has open is removed by the next rebuild. A
/// database file is never replaced under a process that has it open. A rebuild lists the ids
/// only (fast: no record is read), with unknown summaries, filled in afterwards.
///
/// **Rebuilding while others write** (two lock files in `locks/`): every writer holds
/// `listing-fence` shared from its change of the index until its record change is done, after
/// passing `listing-turnstile`; a rebuild holds the turnstile (new writers wait) and then the
/// fence exclusively (writers under way finish), so it reads every record a finished writer left
/// and no writer changes the old generation after the rebuild read the records.
final class ListingIndex: Sendable {
    /// The layout of the tables this build reads and writes, and its journal (generations of
    /// another format, such as 2 with a rollback journal or 3 without summaries, are rebuilt).
    static let formatVersion = 4

    /// Why the index cannot answer now.
    struct Unusable: Error, CustomStringConvertible {
        /// The generation is missing, of another format, incomplete or damaged: only a rebuild
        /// helps (one is scheduled or under way). Otherwise the failure may pass (I/O, a lock
        /// held too long).
        var needsRebuild: Bool
        var description: String
    }

    let directory: String
    let currentPath: String
    let fencePath: String
    let turnstilePath: String
    let temporaryDirectory: String
    /// Every id that has a record, for a rebuild.
    let enumerateIDs: @Sendable ((String) -> Void) throws -> Void
    let logger: Logger
    /// One connection for pages, one for changes (a commit's `fsync` does not hold pages up).
    let reader = Mutex<Generation?>(nil)
    let writer = Mutex<Generation?>(nil)
    /// Writers' changes, committed together.
    let commits = GroupCommits<Change, Unusable>()
    let rebuilds = DispatchQueue(label: "flipbook.storage.listing-rebuild")
    let rebuildPending = Mutex(false)

    /// An open generation: its database, the `CURRENT` it was opened under, and the shared lock
    /// that tells rebuilds it is in use.
    final class Generation {
        let name: String
        let stamp: FileStamp
        let database: SQLiteDatabase
        let usersLock: Int32

        init(name: String, stamp: FileStamp, database: SQLiteDatabase, usersLock: Int32) {
            self.name = name
            self.stamp = stamp
            self.database = database
            self.usersLock = usersLock
        }

        deinit { close(usersLock) }
    }

    /// - Parameters:
    ///   - directory: `<dataDir>/index` (made if missing).
    ///   - locks: the directory of the lock files.
    ///   - temporaryDirectory: on the same file system, for writing `CURRENT`.
    ///   - enumerateIDs: calls its argument with every id that has a record (for rebuilds).
    init(
        directory: String, locks: String, temporaryDirectory: String, logger: Logger,
        enumerateIDs: @escaping @Sendable ((String) -> Void) throws -> Void
    ) {
        self.directory = directory
        currentPath = directory + "/CURRENT"
        fencePath = locks + "/listing-fence"
        turnstilePath = locks + "/listing-turnstile"
        self.temporaryDirectory = temporaryDirectory
        self.logger = logger
        self.enumerateIDs = enumerateIDs
    }

    /// Opens the generation `CURRENT` names, rebuilding the index first when it is missing or
    /// unusable (at start-up). Returns what was done, for the log.
    func open() throws -> String {
        if (try? withGeneration(writer, { _ throws(SQLiteDatabase.Failure) in })) != nil {
            removeUnusedGenerationsIfIdle()
            return "opened"
        }
        let built = try rebuild(replacing: nil)
        return built ? "rebuilt" : "opened"
    }

    // MARK: Reading

    /// The columns of a row, in the order ``entry(_:)`` reads them.
    static let columns =
        "id, sha256, source, name, format, mimeType, width, height, frameCount, animated, playCount, durationMs, "
        + "fileBytes, revision"

    /// Up to `limit` ids after `cursor` (all when nil), in byte order, with their summaries (nil
    /// when unknown).
    func page(after cursor: String?, limit: Int) throws(Unusable) -> [ListedEntry] {
        var entries: [ListedEntry] = []
        entries.reserveCapacity(limit)
        try withGeneration(reader) { database throws(SQLiteDatabase.Failure) in
            try database.run(
                "SELECT \(Self.columns) FROM ids WHERE id > ? ORDER BY id LIMIT ?", [cursor ?? ""], integers: [limit]
            ) { entries.append(Self.entry($0)) }
        }
        return entries
    }

    /// Up to `limit` ids after `cursor` whose summary is unknown, in byte order.
    func unsummarised(after cursor: String?, limit: Int) throws(Unusable) -> [String] {
        var ids: [String] = []
        try withGeneration(reader) { database throws(SQLiteDatabase.Failure) in
            try database.run(
                "SELECT id FROM ids WHERE sha256 IS NULL AND id > ? ORDER BY id LIMIT ?", [cursor ?? ""],
                integers: [limit]
            ) { ids.append($0.text(0)) }
        }
        return ids
    }

    /// The entry of `id`, when it is in the index.
    func entry(of id: String) throws(Unusable) -> ListedEntry? {
        var found: ListedEntry?
        try withGeneration(reader) { database throws(SQLiteDatabase.Failure) in
            try database.run("SELECT \(Self.columns) FROM ids WHERE id = ?", [id]) { found = Self.entry($0) }
        }
        return found
    }

    /// Whether `id` is in the index.
    func contains(_ id: String) throws(Unusable) -> Bool {
        try entry(of: id) != nil
    }

    /// How many ids the index holds (kept by triggers: no scan).
    func count() throws(Unusable) -> Int {
        var count = 0
        try withGeneration(reader) { database throws(SQLiteDatabase.Failure) in
            try database.run("SELECT value FROM state WHERE key = 'count'") { count = $0.integer(0) }
        }
        return count
    }

    /// A row read with ``columns``.
    private static func entry(_ row: SQLiteDatabase.Row) -> ListedEntry {
        let id = row.text(0)
        guard !row.isNull(1), let source = StoredImage.Source(rawValue: row.text(2)) else {
            return ListedEntry(id: id, summary: nil)
        }
        let headline = ImageHeadline(
            format: row.text(4), mimeType: row.text(5), width: row.integer(6), height: row.integer(7),
            frameCount: row.integer(8), animated: row.integer(9) != 0, playCount: row.integer(10),
            durationMs: row.integer(11), fileBytes: row.integer(12))
        return ListedEntry(
            id: id,
            summary: ImageSummary(
                id: id, sha256: row.text(1), source: source, name: row.isNull(3) ? nil : row.text(3),
                headline: headline, outputRevision: row.isNull(13) ? nil : row.integer(13)))
    }

    // MARK: Writing

    /// Runs `body` — a writer's index change and the record change that goes with it — holding
    /// the fence shared, so that no rebuild reads the records in between.
    func whileWriting<Result>(_ body: () throws -> Result) throws -> Result {
        try FileLocks.holding(turnstilePath) {}
        return try FileLocks.holding(fencePath, shared: true, body)
    }

    /// Marks the summaries of `ids` unknown, durably (inside ``whileWriting(_:)``, before their
    /// records are written, replaced or removed); with `adding`, adds the ids not in the index
    /// (a new record), else leaves them out. When the index is unusable a rebuild is scheduled
    /// instead: it waits for this writer and reads its record.
    func markChanging(_ ids: [String], adding: Bool = true) throws {
        let sql =
            adding
            ? "INSERT INTO ids (id) VALUES (?) ON CONFLICT (id) DO UPDATE SET sha256 = NULL"
            : "UPDATE ids SET sha256 = NULL WHERE id = ?"
        try change(Change(sql: sql, rows: ids.map { [.text($0)] }, durable: true))
    }

    /// Sets the summaries of ids in the index (after their records were written, or read under
    /// their locks); not durable — a crash may leave them unknown, as before.
    func setSummaries(_ summaries: [ImageSummary]) throws {
        let rows = summaries.map { summary -> [SQLiteDatabase.Value] in
            let headline = summary.headline
            return [
                .text(summary.sha256), .text(summary.source.rawValue), summary.name.map { .text($0) } ?? .null,
                .text(headline.format), .text(headline.mimeType), .integer(headline.width), .integer(headline.height),
                .integer(headline.frameCount), .integer(headline.animated ? 1 : 0), .integer(headline.playCount),
                .integer(headline.durationMs), .integer(headline.fileBytes),
                summary.outputRevision.map { .integer($0) } ?? .null, .text(summary.id),
            ]
        }
        let sql =
            "UPDATE ids SET sha256 = ?, source = ?, name = ?, format = ?, mimeType = ?, width = ?, height = ?, "
            + "frameCount = ?, animated = ?, playCount = ?, durationMs = ?, fileBytes = ?, revision = ? WHERE id = ?"
        try change(Change(sql: sql, rows: rows, durable: false))
    }

    /// Removes `ids` (inside ``whileWriting(_:)``, after their records are removed); not durable:
    /// an id a crash leaves has an unknown summary and no record, and is removed by listing.
    func remove(_ ids: [String]) throws {
        try change(Change(sql: "DELETE FROM ids WHERE id = ?", rows: ids.map { [.text($0)] }, durable: false))
    }

    /// One statement run once per row, in a transaction with the other writers' changes of the
    /// moment (``GroupCommits``); durable when it returns if `durable` (a transaction is when one
    /// of its changes must be).
    struct Change: Sendable {
        var sql: String
        var rows: [[SQLiteDatabase.Value]]
        var durable: Bool
    }

    private func change(_ change: Change) throws {
        let result = commits.submit(change) { batch in
            Result { () throws(Unusable) in
                try withGeneration(writer) { database throws(SQLiteDatabase.Failure) in
                    let durable = batch.contains { $0.durable }
                    try database.execute(durable ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
                    try database.execute("BEGIN IMMEDIATE")
                    do throws(SQLiteDatabase.Failure) {
                        for change in batch { for row in change.rows { try database.run(change.sql, values: row) } }
                        try database.execute("COMMIT")
                    } catch {
                        try? database.execute("ROLLBACK")
                        throw error
                    }
                }
            }
        }
        do throws(Unusable) {
            try result.get()
        } catch {
            guard error.needsRebuild else { throw error }
            scheduleRebuild(replacing: nil)
        }
    }

    // MARK: Generations

    /// Runs `body` on the connection of `slot`, (re)opened when `CURRENT` changed. A database
    /// SQLite finds damaged schedules a rebuild.
    private func withGeneration(
        _ slot: borrowing Mutex<Generation?>, _ body: (SQLiteDatabase) throws(SQLiteDatabase.Failure) -> Void
    ) throws(Unusable) {
        try slot.withLock { (generation: inout Generation?) throws(Unusable) -> Void in
            guard let stamp = FileStamp(path: currentPath) else {
                generation = nil
                throw Unusable(needsRebuild: true, description: "the listing index has no CURRENT generation")
            }
            if generation?.stamp != stamp { generation = try openGeneration(stamp) }
            guard let open = generation else { return }
            do throws(SQLiteDatabase.Failure) {
                try body(open.database)
            } catch {
                guard error.isDamage else { throw Unusable(needsRebuild: false, description: "listing index: \(error)") }
                generation = nil
                logger.error("the listing index is damaged: rebuilding it", metadata: ["error": "\(error)"])
                scheduleRebuild(replacing: open.name)
                throw Unusable(needsRebuild: true, description: "the listing index is damaged and being rebuilt")
            }
        }
    }

    static func isGenerationName(_ name: String) -> Bool {
        name.hasPrefix("ids-") && name.hasSuffix(".sqlite") && !name.contains("/")
    }

    /// The generation `CURRENT` names, checked (format, completeness) and marked in use.
    private func openGeneration(_ stamp: FileStamp) throws(Unusable) -> Generation {
        let name = try currentName()
        let database: SQLiteDatabase
        var format = 0
        var complete = 0
        do throws(SQLiteDatabase.Failure) {
            database = try SQLiteDatabase(path: directory + "/" + name, create: false)
            try database.run("SELECT key, value FROM state WHERE key IN ('format', 'complete')") { row in
                if row.text(0) == "format" { format = row.integer(1) } else { complete = row.integer(1) }
            }
            if format == Self.formatVersion {
                try database.execute("PRAGMA synchronous = FULL; PRAGMA cache_size = -2048")
            }
        } catch {
            throw Unusable(
                needsRebuild: error.isDamage || error.code & 0xFF == SQLITE_CANTOPEN || error.code & 0xFF == SQLITE_ERROR,
                description: "listing index \(name): \(error)")
        }
        guard format == Self.formatVersion, complete == 1 else {
            throw Unusable(needsRebuild: true, description: "listing index \(name): format \(format), complete \(complete)")
        }
        let usersLock = Glibc.open(directory + "/" + name + ".users", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard usersLock >= 0 else { throw Unusable(needsRebuild: false, description: "cannot open \(name).users") }
        _ = flock(usersLock, LOCK_SH)
        return Generation(name: name, stamp: stamp, database: database, usersLock: usersLock)
    }

    /// The file name `CURRENT` holds.
    func currentName() throws(Unusable) -> String {
        guard let bytes = try? DurableFiles.read(currentPath) else {
            throw Unusable(needsRebuild: true, description: "the listing index has no CURRENT generation")
        }
        let name = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
        guard Self.isGenerationName(name) else {
            throw Unusable(needsRebuild: true, description: "the listing index's CURRENT names '\(name)'")
        }
        return name
    }
}
