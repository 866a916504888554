import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `storage.backend = fs`: images in a data directory that several replicas may share.
///
/// Layout:
/// - `objects/<id>` — the image's bytes, exactly as uploaded;
/// - `meta/<id>.json` — its ``StoredImage`` record; its presence is what makes an image exist
///   (written last on upload, removed first on delete), so a crash never leaves a half image;
/// - `tmp/` — uploads in progress and files being replaced;
/// - `index/` — the ids in byte order (``ListingIndex``), for listing: an id is added before its
///   record is written and removed after its record is removed;
/// - `locks/` — 64 lock files; a record is written or removed only under its id's lock
///   (``withRecordLock(_:_:)``), so a conditional rewrite (``rewrite(_:over:)``) sees every other
///   writer's change, across the replicas sharing the directory; and the listing index's two.
///
/// Every write goes through ``DurableFiles`` (temporary file, `fsync`, `rename`, `fsync` of the
/// directory), so a file under its final name is complete. What a crash can leave behind — an
/// object without a record, a file in `tmp/` — is never visible through the API, and is removed
/// at start-up (``reconcile(now:)``, in `FileSystemBackend+Reconcile.swift`).
final class FileSystemBackend: StorageBackend {
    let dataDirectory: String
    let objectsDirectory: String
    let metaDirectory: String
    let temporaryDirectory: String
    let locksDirectory: String
    /// The stored ids in order, for listing.
    let index: ListingIndex

    /// What start-up reconciliation removed.
    let startupReconciliation: Reconciliation
    /// Whether the listing index was opened or rebuilt at start-up.
    let indexAtStartup: String

    var lookupsAreLocal: Bool { true }
    var uploadDirectory: String { temporaryDirectory }

    init(dataDirectory: String, logger: Logger = Logger(label: "flipbook.storage")) throws(StorageFailure) {
        self.dataDirectory = dataDirectory
        objectsDirectory = dataDirectory + "/objects"
        metaDirectory = dataDirectory + "/meta"
        temporaryDirectory = dataDirectory + "/tmp"
        locksDirectory = dataDirectory + "/locks"
        for directory in [dataDirectory, objectsDirectory, metaDirectory, temporaryDirectory, locksDirectory] {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw .failed("cannot create \(directory): \(error.localizedDescription)")
            }
        }
        startupReconciliation = Self.reconcile(
            objects: objectsDirectory, meta: metaDirectory,
            temporary: temporaryDirectory, now: Date().timeIntervalSince1970)
        let meta = metaDirectory
        index = ListingIndex(
            directory: dataDirectory + "/index", locks: locksDirectory, temporaryDirectory: temporaryDirectory,
            logger: logger, enumerateIDs: { each in try Self.enumerateStoredIDs(meta: meta, each) })
        do {
            indexAtStartup = try index.open()
        } catch {
            throw .failed("cannot open or rebuild the listing index in \(dataDirectory)/index: \(error)")
        }
    }

    /// Records in the data directory (for the start-up log line; nil when the index cannot say).
    var storedCount: Int? { try? index.count() }

    /// Calls `each` with the id of every record in `meta` (rebuilding the listing index).
    static func enumerateStoredIDs(meta: String, _ each: (String) -> Void) throws {
        guard let directory = opendir(meta) else { throw DurableFiles.failure("cannot read", meta) }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasSuffix(".json"), !name.hasPrefix(".") else { continue }
            let id = String(name.dropLast(5))
            if ImageID.isWellFormed(id) { each(id) }
        }
    }

    func metaPath(_ id: String) -> String { metaDirectory + "/" + id + ".json" }
    func objectPath(_ id: String) -> String { objectsDirectory + "/" + id }

    // MARK: Reading

    func fetch(_ id: String) throws(StorageFailure) -> FetchedRecord? {
        let path = metaPath(id)
        guard let stamp = FileStamp(path: path) else { return nil }
        let bytes: [UInt8]
        do {
            bytes = try DurableFiles.read(path)
        } catch {
            if FileStamp(path: path) == nil { return nil }  // deleted between the stat and the read
            throw .failed("\(error)")
        }
        do {
            return FetchedRecord(record: try StoredImage.decode(bytes), version: .file(stamp))
        } catch {
            throw .failed("unreadable image record \(path): \(error)")
        }
    }

    func revalidate(_ id: String, version: RecordVersion) throws(StorageFailure) -> Revalidation {
        guard let stamp = FileStamp(path: metaPath(id)) else { return .gone }
        if version == .file(stamp) { return .unchanged }
        guard let fresh = try fetch(id) else { return .gone }
        return .changed(fresh)
    }

    func originalPath(_ record: StoredImage) throws(StorageFailure) -> String {
        objectPath(record.id)
    }

    func hasLocalOriginal(_ record: StoredImage) -> Bool { true }

    func prefetchOriginal(_ sha256: String) {}

    /// From the listing index: `limit + 1` ids after `cursor`, each checked to have a record (an
    /// id whose writer crashed before writing its record is skipped, and removed from the index).
    func listIDs(after cursor: String?, limit: Int) throws(StorageFailure) -> (ids: [String], more: Bool) {
        var ids: [String] = []
        var after = cursor
        var dangling: [String] = []
        while ids.count <= limit {
            let wanted = limit + 1 - ids.count
            let batch: [String]
            do throws(ListingIndex.Unusable) {
                batch = try index.page(after: after, limit: wanted)
            } catch {
                throw error.needsRebuild ? .unavailable(error.description) : .failed(error.description)
            }
            for id in batch {
                if access(metaPath(id), F_OK) == 0 { ids.append(id) } else { dangling.append(id) }
            }
            guard batch.count == wanted, let last = batch.last else { break }
            after = last
        }
        if !dangling.isEmpty { removeDangling(dangling) }
        return (Array(ids.prefix(limit)), ids.count > limit)
    }

    /// Removes from the index the ids that still have no record once their lock is taken (a
    /// writer holds it from adding the id until its record is written).
    private func removeDangling(_ ids: [String]) {
        for id in ids {
            _ = try? withRecordLock(id) {
                try index.whileWriting {
                    if access(metaPath(id), F_OK) != 0 { try index.remove(id) }
                }
            }
        }
    }

    // MARK: Writing

    func store(
        _ record: StoredImage, uploadPath: String,
        replacing previous: StoredImage?
    ) throws(StorageFailure) -> RecordVersion {
        let meta = metaPath(record.id)
        do {
            try withRecordLock(record.id) {
                try index.whileWriting {
                    // The id in the index, the bytes, then the record that makes them an image.
                    try index.add(record.id)
                    try DurableFiles.moveIntoPlace(uploadPath, objectPath(record.id))
                    try DurableFiles.write(Array(record.encoded()), to: meta, temporaryDirectory: temporaryDirectory)
                }
            }
        } catch {
            throw .failed("\(error)")
        }
        guard let stamp = FileStamp(path: meta) else { throw .failed("\(meta) vanished after it was written") }
        return .file(stamp)
    }

    func rewrite(_ record: StoredImage, over version: RecordVersion) throws(StorageFailure) -> RecordVersion? {
        let meta = metaPath(record.id)
        do {
            return try withRecordLock(record.id) { () throws -> RecordVersion? in
                guard let stamp = FileStamp(path: meta), version == .file(stamp) else { return nil }
                try DurableFiles.write(Array(record.encoded()), to: meta, temporaryDirectory: temporaryDirectory)
                return FileStamp(path: meta).map { .file($0) }
            }
        } catch {
            throw .failed("\(error)")
        }
    }

    func delete(_ record: StoredImage) throws(StorageFailure) -> Bool {
        do {
            return try withRecordLock(record.id) {
                try index.whileWriting {
                    // The record first: without it the object is invisible, whatever happens next;
                    // the id leaves the index last.
                    let removed = try DurableFiles.remove(metaPath(record.id))
                    try DurableFiles.remove(objectPath(record.id))
                    // Should this fail, the id is skipped by listing and removed then.
                    try? index.remove(record.id)
                    return removed
                }
            }
        } catch {
            throw .failed("\(error)")
        }
    }

    /// Runs `body` holding the lock of `id`'s record: one of 64 lock files, chosen by a hash of
    /// the id (writes are rare; ids sharing a lock only wait for each other).
    func withRecordLock<Result>(_ id: String, _ body: () throws -> Result) throws -> Result {
        var hash: UInt32 = 2_166_136_261  // FNV-1a
        for byte in id.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return try FileLocks.holding(locksDirectory + "/record-\(hash % 64)", body)
    }

    func forgetOriginal(_ sha256: String) {}

    /// Writable when a file can be created in the data directory right now.
    func health() -> StorageHealth {
        let probe = temporaryDirectory + "/.ready-" + UUID().uuidString
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return StorageHealth(.down, detail: "The data directory is not writable.") }
        close(fd)
        unlink(probe)
        return StorageHealth(.ready)
    }

    var isReachable: Bool { true }
}
