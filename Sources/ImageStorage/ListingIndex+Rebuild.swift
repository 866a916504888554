import Dispatch
import FoundationEssentials
import Glibc
import SystemResources

/// Rebuilding the listing index from the records: a new generation, filled in one transaction
/// while the fence keeps writers out (ids only, their summaries unknown until filled in), then
/// named by `CURRENT`; generations nobody uses removed.
extension ListingIndex {
    /// Rebuilds unless another process did while this one waited for the fence: when `replacing`
    /// is nil, unless `CURRENT` names a usable generation; else unless it names another one than
    /// `replacing` (the damaged one). True when this call built a generation.
    @discardableResult
    func rebuild(replacing damaged: String?) throws -> Bool {
        try FileLocks.holding(turnstilePath) {
            try FileLocks.holding(fencePath) {
                if let current = try? currentName(), current != damaged, isUsable(current) { return false }
                let started = Date()
                let name = "ids-" + UUID().uuidString.lowercased() + ".sqlite"
                let count = try build(name)
                try DurableFiles.write(Array(name.utf8), to: currentPath, temporaryDirectory: temporaryDirectory)
                // This process lets go of the generation it had open, so it can be removed now.
                reader.withLock { $0 = nil }
                writer.withLock { $0 = nil }
                logger.notice(
                    "listing index rebuilt from the records",
                    metadata: [
                        "ids": "\(count)", "generation": "\(name)",
                        "seconds": "\(DecimalText.fixed(Date().timeIntervalSince(started), places: 2))",
                    ])
                removeUnusedGenerations(keeping: name)
                return true
            }
        }
    }

    /// Schedules a rebuild on the background queue (one at a time; further requests while one is
    /// pending are the same request).
    func scheduleRebuild(replacing damaged: String?) {
        let first = rebuildPending.withLock { pending in
            defer { pending = true }
            return !pending
        }
        guard first else { return }
        rebuilds.async { [self] in
            rebuildPending.withLock { $0 = false }
            do {
                try rebuild(replacing: damaged)
            } catch {
                logger.error("the listing index could not be rebuilt", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Whether the generation `name` opens, has this build's format and is complete.
    private func isUsable(_ name: String) -> Bool {
        guard let database = try? SQLiteDatabase(path: directory + "/" + name, create: false) else { return false }
        var usable = 0
        try? database.run(
            "SELECT count(*) FROM state WHERE (key = 'format' AND value = ?) OR (key = 'complete' AND value = 1)",
            integers: [Self.formatVersion]
        ) { usable = $0.integer(0) }
        return usable == 2
    }

    /// Makes the generation `name` from the records; returns how many ids it holds.
    private func build(_ name: String) throws -> Int {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + name
        let database = try SQLiteDatabase(path: path, create: true)
        try database.execute(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = FULL;
            CREATE TABLE ids (
                id TEXT PRIMARY KEY NOT NULL, sha256 TEXT, source TEXT, name TEXT, format TEXT, mimeType TEXT,
                width INTEGER, height INTEGER, frameCount INTEGER, animated INTEGER, playCount INTEGER,
                durationMs INTEGER, fileBytes INTEGER, revision INTEGER
            ) WITHOUT ROWID;
            CREATE INDEX unsummarised ON ids (id) WHERE sha256 IS NULL;
            CREATE TABLE state (key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TRIGGER ids_added AFTER INSERT ON ids
                BEGIN UPDATE state SET value = value + 1 WHERE key = 'count'; END;
            CREATE TRIGGER ids_removed AFTER DELETE ON ids
                BEGIN UPDATE state SET value = value - 1 WHERE key = 'count'; END;
            INSERT INTO state (key, value) VALUES ('format', \(Self.formatVersion)), ('count', 0), ('complete', 0);
            BEGIN;
            """)
        var failure: SQLiteDatabase.Failure?
        try enumerateIDs { id in
            guard failure == nil else { return }
            do throws(SQLiteDatabase.Failure) {
                try database.run("INSERT OR IGNORE INTO ids (id) VALUES (?)", [id])
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        try database.execute("UPDATE state SET value = 1 WHERE key = 'complete'; COMMIT; PRAGMA wal_checkpoint(TRUNCATE);")
        var count = 0
        try database.run("SELECT value FROM state WHERE key = 'count'") { count = $0.integer(0) }
        return count
    }

    /// Removes the generations other than `keeping` that no process has open (their `.users`
    /// lock is free): older generations and what a rebuild cut short left. Only under the fence
    /// held exclusively, so no rebuild is filling one of them.
    private func removeUnusedGenerations(keeping: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where Self.isGenerationName(name) && name != keeping {
            let base = directory + "/" + name
            switch FileLocks.probe(base + ".users") {
            case .held, .unsupported:
                continue
            case .unheld(let fd):
                for suffix in ["", "-wal", "-shm", "-journal"] { unlink(base + suffix) }
                unlink(base + ".users")
                close(fd)
            case .missing:
                for suffix in ["", "-wal", "-shm", "-journal"] { unlink(base + suffix) }
            }
        }
        try? DurableFiles.syncDirectory(of: directory + "/.")
    }

    /// ``removeUnusedGenerations(keeping:)`` at start-up, when the fence is free at once (no
    /// writer, no rebuild anywhere); else left for the next rebuild.
    func removeUnusedGenerationsIfIdle() {
        guard let current = try? currentName() else { return }
        _ = try? FileLocks.holding(turnstilePath, wait: false) {
            try FileLocks.holding(fencePath, wait: false) { removeUnusedGenerations(keeping: current) }
        }
    }
}
