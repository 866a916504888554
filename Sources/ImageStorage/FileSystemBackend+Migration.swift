import FoundationEssentials
import Glibc

/// Moving the flat layout of earlier versions (`objects/<id>`, `meta/<id>.json`) into the fan-out
/// one (``DataLayout``), an id at a time under its record lock, in three steps each of which may
/// be cut short by a crash and is done again, or found done, by the next run:
///
/// 1. the id is added to the listing index when it is not in it (a replica of an earlier version
///    wrote it after the index was built), its summary marked unknown (that replica may have
///    rewritten the record; the summary is filled in again from the record);
/// 2. its bytes move, `objects/<id>` → `images/<p>/<id>`, replacing what is there;
/// 3. its record moves, `meta/<id>.json` → `records/<p>/<id>.json`, replacing what is there.
///
/// Until step 3 the record is read where it is, the earlier layout's first (``recordPath(_:)``),
/// and its bytes where they are (``originalPath(_:)``): the image is served throughout. Step 2 is
/// durable before step 3 starts (a `syncfs` per group of ids), so no record ever names bytes
/// that a crash put back. Files of the earlier layout are the newer when both layouts hold an id:
/// every write of this version moves the id's earlier files first, so only a replica of an
/// earlier version can have written them since. An `objects/<id>` without `meta/<id>.json` is
/// not moved: it is a crashed writer's leftover, which reconciliation removes.
extension FileSystemBackend {
    /// What one pass did.
    struct Migration: Sendable, Equatable, CustomStringConvertible {
        /// Images moved (record and bytes).
        var moved = 0
        /// Of them, images that were not in the listing index yet.
        var indexed = 0

        var description: String { "\(moved) image(s) moved into the fan-out layout (\(indexed) newly indexed)" }
    }

    /// A stop of the migration where a crash could have stopped it (tests).
    struct SimulatedCrash: Error {}

    /// The ids read from `meta/` at a time; they are moved in groups that share a record lock.
    static let migrationChunk = 65_536

    /// Moves every image of the earlier layout (every `meta/<id>.json`, with its bytes). With
    /// `crashAfter`, stops with ``SimulatedCrash`` after that many steps (an index addition or a
    /// move each), as a crash there would.
    @discardableResult
    func migrateLegacyLayout(crashAfter: Int? = nil) throws -> Migration {
        var result = Migration()
        var steps = 0
        let step = { () throws in
            steps += 1
            if let crashAfter, steps > crashAfter { throw SimulatedCrash() }
        }
        while access(layout.legacyMeta, F_OK) == 0 {
            let ids = try DataLayout.names(in: layout.legacyMeta).lazy.compactMap(DataLayout.recordID)
                .prefix(Self.migrationChunk)
            guard !ids.isEmpty else { break }
            let groups = Dictionary(grouping: ids, by: Self.recordLockNumber)
            for (_, group) in groups.sorted(by: { $0.key < $1.key }) {
                try withRecordLock(group[0]) {
                    try index.whileWriting { try migrateGroup(group, &result, step) }
                }
            }
        }
        return result
    }

    /// Steps 1 and 2 for every id of `group` (they share a lock, held), a `syncfs`, then step 3.
    private func migrateGroup(_ group: [String], _ result: inout Migration, _ step: () throws -> Void) throws {
        let legacy = group.filter { access(layout.legacyRecordPath($0), F_OK) == 0 }
        guard !legacy.isEmpty else { return }
        for id in legacy where try !index.contains(id) {
            try step()
            result.indexed += 1
        }
        // In the index, their summaries unknown: a replica of the earlier version may have
        // rewritten a record since its summary was taken.
        try index.markChanging(legacy)
        var bytesMoved: [String] = []
        for id in legacy {
            try layout.makeShards(of: id)
            if access(layout.legacyObjectPath(id), F_OK) == 0 {
                try step()
                try Self.rename(layout.legacyObjectPath(id), layout.imagePath(id))
            }
            bytesMoved.append(id)
        }
        try DurableFiles.syncFileSystem(of: dataDirectory)
        for id in bytesMoved {
            try step()
            try Self.rename(layout.legacyRecordPath(id), layout.recordPath(id))
            result.moved += 1
        }
        try DurableFiles.syncFileSystem(of: dataDirectory)
    }

    /// The same for one id, each move made durable at once: a write of this version does it
    /// (holding the id's lock and the listing fence) before it changes the id.
    func migrateLegacyFiles(of id: String) throws {
        guard access(layout.legacyRecordPath(id), F_OK) == 0 else { return }
        try index.markChanging([id])
        try layout.makeShards(of: id)
        if access(layout.legacyObjectPath(id), F_OK) == 0 {
            try Self.rename(layout.legacyObjectPath(id), layout.imagePath(id))
            try DurableFiles.syncDirectory(of: layout.imagePath(id))
        }
        try Self.rename(layout.legacyRecordPath(id), layout.recordPath(id))
        try DurableFiles.syncDirectory(of: layout.recordPath(id))
        logger.info("image moved into the fan-out layout", metadata: ["id": "\(id)"])
    }

    /// Renames `from` to `to`, replacing it; unlike ``DurableFiles/moveIntoPlace(_:_:)`` never
    /// removes `from` when that fails.
    static func rename(_ from: String, _ to: String) throws {
        guard Glibc.rename(from, to) == 0 else { throw DurableFiles.failure("cannot move \(from) to", to) }
    }
}
