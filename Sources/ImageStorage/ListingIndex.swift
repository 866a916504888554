import CSQLite
import Dispatch
import FoundationEssentials
import Logging
import Synchronization
import SystemResources

#if canImport(Glibc)
import Glibc
#endif

/// The ids stored in a data directory (`storage.backend = fs`) in byte order, on disk beside the
/// records, so that a page of `GET /images` costs its own size: an SQLite table (a B-tree) in
/// `index/`, shared by the replicas that share the directory.
///
/// **What it promises**: every id with a record is in it. A writer adds the id before it writes
/// the record and removes it after it removed the record, both under the record's lock; an id
/// without a record (a writer that crashed in between) is skipped by listing and removed then
/// (``FileSystemBackend/listIDs(after:limit:)``). Each change is an SQLite transaction with
/// `synchronous = FULL` in WAL mode: durable when it returns, rolled back whole by a crash. The
/// changes of concurrent writers are committed together (``GroupCommits``). WAL mode's shared
/// memory ties the processes sharing the index to one host (measured on the benchmark machine, a
/// commit costs 3.6 ms in WAL mode and 8–14 ms with a rollback journal, which would have allowed
/// a network file system; replicas on several hosts use S3).
///
/// **Generations**: `index/CURRENT` names the database in use, `ids-<uuid>.sqlite`. One that is
/// missing, of another format, not marked complete, or that SQLite finds damaged is rebuilt from
/// the records into a new generation, which `CURRENT` then names (a rename: atomic, so a crash
/// leaves the old name or the new, complete one). Every process notices the new name on its next
/// use (one `stat`) and reopens; a generation nobody has open is removed by the next rebuild. A
/// database file is never replaced under a process that has it open.
///
/// **Rebuilding while others write** (two lock files in `locks/`): every writer holds
/// `listing-fence` shared from its change of the index until its record change is done, after
/// passing `listing-turnstile`; a rebuild holds the turnstile (new writers wait) and then the
/// fence exclusively (writers under way finish), so it reads every record a finished writer left
/// and no writer changes the old generation after the rebuild read the records.
final class ListingIndex: Sendable {
    /// The layout of the tables this build reads and writes, and its journal (generations of
    /// another format, such as 2 with a rollback journal, are rebuilt).
    static let formatVersion = 3

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
    let commits = GroupCommits<Unusable>()
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

    /// Up to `limit` ids after `cursor` (all when nil), in byte order.
    func page(after cursor: String?, limit: Int) throws(Unusable) -> [String] {
        var ids: [String] = []
        ids.reserveCapacity(limit)
        try withGeneration(reader) { database throws(SQLiteDatabase.Failure) in
            try database.run(
                "SELECT id FROM ids WHERE id > ? ORDER BY id LIMIT ?", [cursor ?? ""], integers: [limit]
            ) { ids.append($0.text(0)) }
        }
        return ids
    }

    /// Whether `id` is in the index.
    func contains(_ id: String) throws(Unusable) -> Bool {
        var found = false
        try withGeneration(reader) { database throws(SQLiteDatabase.Failure) in
            try database.run("SELECT 1 FROM ids WHERE id = ?", [id]) { _ in found = true }
        }
        return found
    }

    /// How many ids the index holds (kept by triggers: no scan).
    func count() throws(Unusable) -> Int {
        var count = 0
        try withGeneration(reader) { database throws(SQLiteDatabase.Failure) in
            try database.run("SELECT value FROM state WHERE key = 'count'") { count = $0.integer(0) }
        }
        return count
    }

    // MARK: Writing

    /// Runs `body` — a writer's index change and the record change that goes with it — holding
    /// the fence shared, so that no rebuild reads the records in between.
    func whileWriting<Result>(_ body: () throws -> Result) throws -> Result {
        try FileLocks.holding(turnstilePath) {}
        return try FileLocks.holding(fencePath, shared: true, body)
    }

    /// Adds `id` (inside ``whileWriting(_:)``, before its record is written). When the index is
    /// unusable a rebuild is scheduled instead: it waits for this writer and reads its record.
    func add(_ id: String) throws {
        try change("INSERT OR IGNORE INTO ids (id) VALUES (?)", [id])
    }

    /// Adds every one of `ids` in one transaction (a bulk import's batch, inside
    /// ``whileWriting(_:)``, before their records are written).
    func addAll(_ ids: [String]) throws {
        try change("INSERT OR IGNORE INTO ids (id) VALUES (?)", ids)
    }

    /// Removes `id` (inside ``whileWriting(_:)``, after its record is removed).
    func remove(_ id: String) throws {
        try change("DELETE FROM ids WHERE id = ?", [id])
    }

    /// One change, committed with the other writers' of the moment (``GroupCommits``).
    private func change(_ sql: String, _ ids: [String]) throws {
        let result = commits.submit(sql, ids) { batch in
            Result { () throws(Unusable) in
                try withGeneration(writer) { database throws(SQLiteDatabase.Failure) in
                    try database.execute("BEGIN IMMEDIATE")
                    do throws(SQLiteDatabase.Failure) {
                        for change in batch { for id in change.ids { try database.run(change.sql, [id]) } }
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
