import Dispatch
import FoundationEssentials
import Glibc
import Logging
import Synchronization
import SystemResources

/// `storage.backend = fs`: images in a data directory that several replicas may share.
///
/// Layout (``DataLayout``; 4096 fan-out directories `<p>` in each of the first two):
/// - `images/<p>/<id>` — the image's bytes, exactly as uploaded;
/// - `records/<p>/<id>.json` — its ``StoredImage`` record; its presence is what makes an image
///   exist (written last on upload, removed first on delete), so a crash never leaves a half image;
/// - `objects/<id>`, `meta/<id>.json` — the flat layout of earlier versions, moved into the one
///   above in the background (``migrateLegacyLayout(crashAfter:)``) and read until then;
/// - `tmp/` — uploads in progress and files being replaced;
/// - `index/` — the ids in byte order with their listing summaries (``ListingIndex``), for
///   listing: an id is added (its summary unknown) before its record is written and removed after
///   its record is removed;
/// - `locks/` — 64 lock files; a record is written, moved or removed only under its id's lock
///   (``withRecordLock(_:_:)``), so a conditional rewrite (``rewrite(_:over:)``) sees every other
///   writer's change, across the replicas sharing the directory; and the listing index's two.
///
/// Every write goes through ``DurableFiles`` (temporary file, `fsync`, `rename`, `fsync` of the
/// directory), so a file under its final name is complete. What a crash can leave behind — an
/// image without a record, a file in `tmp/` — is never visible through the API, and is removed
/// after start-up, in the background (``reconcile(now:)``, in `FileSystemBackend+Reconcile.swift`).
final class FileSystemBackend: StorageBackend {
    let dataDirectory: String
    let layout: DataLayout
    let temporaryDirectory: String
    let locksDirectory: String
    /// The stored ids in order, for listing.
    let index: ListingIndex
    let logger: Logger
    /// Whether the listing index was opened or rebuilt at start-up.
    let indexAtStartup: String
    /// Start-up's reconciliation and migration of the earlier layout, in the background.
    let maintenance = DispatchQueue(label: "flipbook.storage.maintenance", qos: .utility)
    /// Whether leftovers are removed and summaries filled in the background (tests run both
    /// themselves).
    let maintainsInBackground: Bool
    /// Filling the listing index's unknown summaries (``fillSummaries(batch:crashAfter:)``).
    let summaryFills = DispatchQueue(label: "flipbook.storage.summaries", qos: .utility)
    let summaryFillPending = Mutex(false)

    var lookupsAreLocal: Bool { true }
    var uploadDirectory: String { temporaryDirectory }

    /// Opens (and makes) the data directory: the listing index is opened, or rebuilt from the
    /// records when missing or damaged, before this returns; leftovers of crashes are removed
    /// and images of the earlier layout moved afterwards, on a background queue (with
    /// `maintainInBackground`; tests run both themselves).
    init(
        dataDirectory: String, logger: Logger = Logger(label: "flipbook.storage"), maintainInBackground: Bool = true
    ) throws(StorageFailure) {
        self.dataDirectory = dataDirectory
        self.logger = logger
        maintainsInBackground = maintainInBackground
        layout = DataLayout(dataDirectory: dataDirectory)
        temporaryDirectory = dataDirectory + "/tmp"
        locksDirectory = dataDirectory + "/locks"
        try DurableFiles.makeDirectories([
            dataDirectory, layout.images, layout.records, temporaryDirectory, locksDirectory,
        ])
        let layout = self.layout
        index = ListingIndex(
            directory: dataDirectory + "/index", locks: locksDirectory, temporaryDirectory: temporaryDirectory,
            logger: logger, enumerateIDs: { each in try layout.enumerateStoredIDs(each) })
        do {
            indexAtStartup = try index.open()
        } catch {
            throw .failed("cannot open or rebuild the listing index in \(dataDirectory)/index: \(error)")
        }
        if maintainInBackground {
            startMaintenance()
            scheduleSummaryFill()
        }
    }

    /// Records in the data directory (for the start-up log line; nil when the index cannot say).
    var storedCount: Int? { try? index.count() }

    // MARK: Reading

    /// Where the record of `id` is now: the earlier layout's when there is one (it is then the
    /// newer: every write of this version moves an id's earlier files first, so only a replica of
    /// an earlier version can have written it since), else the fan-out one.
    func recordPath(_ id: String) -> String {
        let legacy = layout.legacyRecordPath(id)
        return access(legacy, F_OK) == 0 ? legacy : layout.recordPath(id)
    }

    func fetch(_ id: String) throws(StorageFailure) -> FetchedRecord? {
        let path = recordPath(id)
        guard let stamp = FileStamp(path: path) else { return nil }
        let bytes: [UInt8]
        do {
            bytes = try DurableFiles.read(path)
        } catch {
            if FileStamp(path: path) == nil { return try fetch(id) }  // moved or deleted since the stat
            throw .failed("\(error)")
        }
        do {
            return FetchedRecord(record: try StoredImage.decode(bytes), version: .file(stamp))
        } catch {
            throw .failed("unreadable image record \(path): \(error)")
        }
    }

    func revalidate(_ id: String, version: RecordVersion) throws(StorageFailure) -> Revalidation {
        // A record moved into the fan-out layout keeps its inode, time and size: unchanged.
        guard let stamp = FileStamp(path: recordPath(id)) else { return .gone }
        if version == .file(stamp) { return .unchanged }
        guard let fresh = try fetch(id) else { return .gone }
        return .changed(fresh)
    }

    /// The bytes of the record read: the earlier layout's while its record is there (and its bytes
    /// not yet moved), else the fan-out one.
    func originalPath(_ record: StoredImage) throws(StorageFailure) -> String {
        let legacy = layout.legacyObjectPath(record.id)
        if access(layout.legacyRecordPath(record.id), F_OK) == 0, access(legacy, F_OK) == 0 { return legacy }
        return layout.imagePath(record.id)
    }

    func hasLocalOriginal(_ record: StoredImage) -> Bool { true }

    func prefetchOriginal(_ sha256: String) {}

    /// From the listing index: `limit + 1` images after `cursor`, each with the summary the index
    /// holds; an id whose summary is unknown (``ListingIndex``) is listed from its record, or, when
    /// it has none (its writer crashed before writing it), skipped and removed from the index, and
    /// the summaries are filled in the background.
    func listImages(after cursor: String?, limit: Int) throws(StorageFailure) -> (entries: [ListedEntry], more: Bool) {
        var entries: [ListedEntry] = []
        var after = cursor
        var dangling: [String] = []
        var unknown = false
        while entries.count <= limit {
            let wanted = limit + 1 - entries.count
            let batch: [ListedEntry]
            do throws(ListingIndex.Unusable) {
                batch = try index.page(after: after, limit: wanted)
            } catch {
                throw error.needsRebuild ? .unavailable(error.description) : .failed(error.description)
            }
            for entry in batch {
                guard entry.summary == nil else {
                    entries.append(entry)
                    continue
                }
                unknown = true
                if let fetched = try? fetch(entry.id) {
                    entries.append(ListedEntry(id: entry.id, summary: ImageSummary(fetched.record)))
                } else if !hasRecord(entry.id) {
                    dangling.append(entry.id)
                }
            }
            guard batch.count == wanted, let last = batch.last else { break }
            after = last.id
        }
        if !dangling.isEmpty { removeDangling(dangling) }
        if unknown, maintainsInBackground { scheduleSummaryFill() }
        return (Array(entries.prefix(limit)), entries.count > limit)
    }

    func hasRecord(_ id: String) -> Bool {
        access(layout.recordPath(id), F_OK) == 0 || access(layout.legacyRecordPath(id), F_OK) == 0
    }

    /// Removes from the index the ids that still have no record once their lock is taken (a
    /// writer holds it from adding the id until its record is written).
    private func removeDangling(_ ids: [String]) {
        for id in ids {
            _ = try? withRecordLock(id) {
                try index.whileWriting {
                    if !hasRecord(id) { try index.remove([id]) }
                }
            }
        }
    }

    // MARK: Writing

    func store(
        _ record: StoredImage, uploadPath: String,
        replacing previous: StoredImage?
    ) throws(StorageFailure) -> RecordVersion {
        let path = layout.recordPath(record.id)
        do {
            try withRecordLock(record.id) {
                try index.whileWriting {
                    try migrateLegacyFiles(of: record.id)
                    // The id in the index (its summary unknown), the bytes, then the record that
                    // makes them an image, then its summary.
                    try index.markChanging([record.id])
                    try layout.makeShards(of: record.id)
                    try DurableFiles.moveIntoPlace(uploadPath, layout.imagePath(record.id))
                    try DurableFiles.write(Array(record.encoded()), to: path, temporaryDirectory: temporaryDirectory)
                    try? index.setSummaries([ImageSummary(record)])
                }
            }
        } catch {
            throw .failed("\(error)")
        }
        guard let stamp = FileStamp(path: path) else { throw .failed("\(path) vanished after it was written") }
        return .file(stamp)
    }

    func rewrite(_ record: StoredImage, over version: RecordVersion) throws(StorageFailure) -> RecordVersion? {
        let path = layout.recordPath(record.id)
        do {
            return try withRecordLock(record.id) { () throws -> RecordVersion? in
                try index.whileWriting {
                    try migrateLegacyFiles(of: record.id)
                    guard let stamp = FileStamp(path: path), version == .file(stamp) else { return nil }
                    try index.markChanging([record.id])
                    try DurableFiles.write(Array(record.encoded()), to: path, temporaryDirectory: temporaryDirectory)
                    try? index.setSummaries([ImageSummary(record)])
                    return FileStamp(path: path).map { .file($0) }
                }
            }
        } catch {
            throw .failed("\(error)")
        }
    }

    func delete(_ record: StoredImage) throws(StorageFailure) -> Bool {
        do {
            return try withRecordLock(record.id) {
                try index.whileWriting {
                    try migrateLegacyFiles(of: record.id)
                    // Its summary unknown first (a listing then looks for the record), the record
                    // next: without it the image is invisible, whatever happens next; the id
                    // leaves the index last.
                    try index.markChanging([record.id], adding: false)
                    let removed = try DurableFiles.remove(layout.recordPath(record.id))
                    try DurableFiles.remove(layout.imagePath(record.id))
                    // Should this fail, the id is skipped by listing and removed then.
                    try? index.remove([record.id])
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
        try FileLocks.holding(recordLockPath(id), body)
    }

    func recordLockPath(_ id: String) -> String {
        locksDirectory + "/record-\(Self.recordLockNumber(id))"
    }

    static func recordLockNumber(_ id: String) -> Int {
        var hash: UInt32 = 2_166_136_261  // FNV-1a
        for byte in id.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return Int(hash % 64)
    }

    func forgetOriginal(_ sha256: String) {}

    /// Replicas of one data directory share its products there.
    var sharedProducts: (any SharedProducts)? { nil }

    /// Writable when a file can be created in the data directory right now.
    func health() -> StorageHealth {
        guard DurableFiles.acceptsNewFiles(in: temporaryDirectory) else {
            return StorageHealth(.down, detail: "The data directory is not writable.")
        }
        return StorageHealth(.ready)
    }

    var isReachable: Bool { true }
}
