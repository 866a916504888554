import AnimatedImage
import Dispatch
import FoundationEssentials
import FrameCache
import Logging
import Synchronization
import SystemResources

/// The images Flipbook serves: uploads and named images kept by a ``StorageBackend`` (a data
/// directory, or an S3 bucket with a local cache of originals), plus the files of read-only
/// library directories.
///
/// Records are cached in memory (at most ``RecordCache/maxBytes`` of them, the least recently
/// used dropped first: ``RecordCache``) and trusted for ``recheckSeconds``; then the backend is asked
/// whether they changed (a `stat`, or an S3 `HEAD`), so an image replaced or deleted through
/// another replica is seen within that time. A miss asks the backend, so an upload through
/// another replica is seen at once. When lookups go over the network, records in use are
/// rechecked in the background before they expire, so a request for a hot image never waits on
/// storage. Pixels are never held here: ``loadImage(_:)`` hands the frame cache the original's
/// bytes (memory-mapped, not copied) and index, kept for the most recently used images
/// (``defaultMaxLoadedImages``).
public final class ImageStore: Sendable {
    /// Why an upload or a delete did not happen.
    public enum StoreError: Error, Sendable {
        /// Not an image format Flipbook reads (415).
        case unsupportedFormat(String)
        /// An image that cannot be decoded or exceeds a limit (422).
        case undecodable(String)
        /// The id names a library image, which cannot be replaced or deleted (409).
        case readOnly(String)
        /// The disk or the storage failed (500, logged).
        case io(String)
        /// Storage cannot be reached right now (503 with `Retry-After`).
        case unavailable(String)
        /// Too many uploads already wait for decode memory to verify them (429 with `Retry-After`).
        case busy(String)
    }

    /// A record in memory, with the version it was read at (nil for library images, which do
    /// not change) and when it was last confirmed current.
    package struct Cached: Sendable {
        package var record: StoredImage
        package var metadataJSON: [UInt8]
        var version: RecordVersion?
        var checkedAt: Double
        /// The record is of another output revision and has not been re-indexed yet
        /// (``reindexed(_:_:)``): only a lookup off the event loops serves it, re-indexing first.
        var needsReindex = false
    }

    /// A record as the record cache holds it, under the id it was stored for: shared by
    /// reference between the cache's table and its event loops' views, and handed out as it is
    /// by ``freshRecord(contentID:reader:)`` (a reference, not a copy of the record's fields).
    package final class HeldRecord: Sendable {
        package let id: String
        package let cached: Cached
        /// The id's UTF-8 bytes, made once: the key every view's table keeps (one copy for all
        /// the views, not one each).
        let key: [UInt8]
        init(id: String, _ cached: Cached) { (self.id, self.cached, key) = (id, cached, Array(id.utf8)) }
    }

    /// What can be said about an id without waiting on storage.
    package enum QuickLookup: Sendable {
        case found(StoredImage, metadataJSON: [UInt8])
        case missing
        /// Storage must be asked (off the event loops): ``resolve(_:)``.
        case needsStorage
    }

    /// How long a record is trusted before storage is asked again, by default.
    public static let defaultRecheckSeconds = 1.0

    /// How many images (a file mapping plus its index) the store keeps ready for the frame cache,
    /// least recently used dropped first, so recreating a decoder costs neither a read nor
    /// re-indexing. Bounded by count because each mapping is one of the process's
    /// `vm.max_map_count` (65530 by default) memory maps, which the frame cache's decoders and
    /// the allocator share; the mapped bytes themselves are page cache the kernel can reclaim.
    public static let defaultMaxLoadedImages = 4096

    /// The most memory records kept in memory take, by default (`storage.recordCacheBytes`):
    /// about 14,000 records of small animations (2.4 KB each), a hundred of thousand-frame ones.
    public static let defaultRecordCacheBytes = 32 << 20

    let backend: any StorageBackend
    public let limits: DecodeLimits
    /// Another replica's replace or delete is seen within this many seconds.
    public let recheckSeconds: Double
    let clock: any MonotonicClock
    let logger: Logger
    /// Records in memory, bounded, with a view per event loop (``RecordCache``): lookups by id
    /// from the loops take no lock another loop takes.
    let records: RecordCache
    let library: LibraryImages
    /// Check-and-store of uploads is one step per store, so concurrent uploads of the same new
    /// bytes get one 201 and 200s.
    let commitLock = Mutex(())
    /// Ids being rechecked in the background (at most one recheck per id at a time).
    private let refreshing = Mutex<Set<String>>([])
    /// Background rechecks and a listing's record reads run here: they wait on remote storage,
    /// so not on Dispatch's shared pool (see ``WorkerThreads``).
    let remoteReads = WorkerThreads(name: "storage-read", limit: 16)
    /// Re-indexes records of other output revisions that a listing came across, one at a time.
    private let reindexQueue = DispatchQueue(label: "flipbook.storage.reindex")
    /// Ids being re-indexed: a second lookup waits for the first instead of decoding again.
    private let reindexInProgress = Mutex<[String: DispatchGroup]>([:])
    let loaded: LoadedImages
    /// The decode-memory budget upload verification reserves from (shared with the frame cache).
    let decodeBudget: DecodeMemoryBudget?

    /// A store over a data directory (`storage.backend = fs`); library files that are not images,
    /// or break a limit, are skipped with a warning. With `backgroundMaintenance` (the default),
    /// what crashes left is removed and images of the earlier layout are moved in the background
    /// (``FileSystemBackend``); tests that do it themselves turn it off.
    public convenience init(
        dataDirectory: String, libraryDirectories: [String] = [], limits: DecodeLimits = .default,
        maxLoadedImages: Int = ImageStore.defaultMaxLoadedImages,
        recordCacheBytes: Int = ImageStore.defaultRecordCacheBytes,
        recheckSeconds: Double = ImageStore.defaultRecheckSeconds,
        clock: any MonotonicClock = SystemMonotonicClock(), readers: Int = 1,
        decodeBudget: DecodeMemoryBudget? = nil, backgroundMaintenance: Bool = true,
        logger: Logger = Logger(label: "flipbook.storage")
    ) throws {
        let backend: FileSystemBackend
        do {
            backend = try FileSystemBackend(
                dataDirectory: dataDirectory, logger: logger, maintainInBackground: backgroundMaintenance)
        } catch {
            throw StoreError.io(error.description)
        }
        self.init(
            backend: backend, libraryDirectories: libraryDirectories, limits: limits,
            maxLoadedImages: maxLoadedImages, recordCacheBytes: recordCacheBytes, recheckSeconds: recheckSeconds,
            clock: clock, readers: readers,
            decodeBudget: decodeBudget, logger: logger)
        logger.info(
            "image store open",
            metadata: [
                "backend": "fs", "dataDir": "\(dataDirectory)", "stored": "\(backend.storedCount.map(String.init) ?? "?")",
                "listingIndex": "\(backend.indexAtStartup)", "library": "\(library.count)",
            ])
    }

    /// - Parameter readers: the event loops that look records up (``quickLookup(_:reader:)``).
    /// - Parameter decodeBudget: what upload verification reserves its decoding memory from (nil:
    ///   not bounded).
    init(
        backend: any StorageBackend, libraryDirectories: [String], limits: DecodeLimits, maxLoadedImages: Int,
        recordCacheBytes: Int = ImageStore.defaultRecordCacheBytes, recheckSeconds: Double, clock: any MonotonicClock,
        readers: Int = 1, decodeBudget: DecodeMemoryBudget? = nil,
        logger: Logger
    ) {
        self.backend = backend
        self.decodeBudget = decodeBudget
        records = RecordCache(readers: readers, maxBytes: recordCacheBytes)
        self.limits = limits
        self.recheckSeconds = recheckSeconds
        self.clock = clock
        self.logger = logger
        loaded = LoadedImages(limit: maxLoadedImages)
        library = LibraryImages(directories: libraryDirectories, limits: limits, logger: logger)
    }

    // MARK: Reading

    /// The record of `id`, or nil when there is none (or storage cannot say right now). With
    /// `reindexing` (off the event loops), a record of another output revision is re-indexed
    /// first; without, it is returned as stored.
    public func record(_ id: String, reindexing: Bool = true) -> StoredImage? {
        (try? resolve(id, reindexing: reindexing))?.record
    }

    /// The record and its encoded metadata document.
    public func recordAndMetadata(_ id: String) -> (StoredImage, [UInt8])? {
        (try? resolve(id)).flatMap { $0 }.map { ($0.record, $0.metadataJSON) }
    }

    /// Whether lookups may wait on the network (then handlers call ``resolve(_:)`` off the event
    /// loops when ``quickLookup(_:)`` says so).
    package var lookupsAreLocal: Bool { backend.lookupsAreLocal }

    /// The record of `id` if it can be had without waiting on the network: a cached record that
    /// is still trusted (rechecked in the background when it is about to expire, or when storage
    /// is unreachable — then what is known is served), a library image, or any lookup of a local
    /// backend.
    /// `reader` is the caller's event loop (its own copy of the records), nil for other threads.
    package func quickLookup(_ id: String, reader: Int? = nil) -> QuickLookup {
        // A content id (the usual case) is checked once; it is never a library name.
        let isContentID = ImageID.isContentID(id)
        guard isContentID || ImageID.isWellFormed(id) else { return .missing }
        if !isContentID, let image = library.cached(id) { return .found(image.record, metadataJSON: image.metadataJSON) }
        if backend.lookupsAreLocal {
            guard let cached = try? resolveWellFormed(id, reader: reader, reindexing: false) else { return .missing }
            // Re-indexing decodes the image: not on an event loop.
            if cached.needsReindex { return .needsStorage }
            return .found(cached.record, metadataJSON: cached.metadataJSON)
        }
        guard let cached = records.value(id, reader: reader), !cached.needsReindex else { return .needsStorage }
        let age = clock.seconds() - cached.checkedAt
        if age < recheckSeconds {
            if age >= recheckSeconds * 0.75 { refreshInBackground(id) }
            return .found(cached.record, metadataJSON: cached.metadataJSON)
        }
        if !backend.isReachable {
            refreshInBackground(id)
            return .found(cached.record, metadataJSON: cached.metadataJSON)
        }
        return .needsStorage
    }

    /// The record of content id `id` when the record cache's view of `reader` (an event loop's
    /// index) holds it and it may be served as it is: of this build's output revision, checked
    /// within ``recheckSeconds`` (local storage) or three quarters of it (remote storage, which
    /// refreshes a record in the background after that) — when ``quickLookup(_:reader:)`` would
    /// answer it as it is, and nothing else. nil: ask ``quickLookup(_:reader:)``. The hot path of
    /// frames: one copy of the record, neither its metadata document nor the shared table touched.
    package func freshRecord(contentID id: String, reader: Int) -> StoredImage? {
        var id = id
        return id.withUTF8 { freshRecord(contentID: UnsafeRawBufferPointer($0), reader: reader)?.cached.record }
    }

    /// ``freshRecord(contentID:reader:)`` of the id whose UTF-8 bytes are `id` — a request path's,
    /// looked up without making a `String` of it — handed out as the record cache holds it, by
    /// reference: nothing of the record copied.
    package func freshRecord(contentID id: UnsafeRawBufferPointer, reader: Int) -> HeldRecord? {
        guard ImageID.isContentID(id.assumingMemoryBound(to: UInt8.self)) else { return nil }
        let trusted = backend.lookupsAreLocal ? recheckSeconds : recheckSeconds * 0.75
        return records.freshRecord(id, reader: reader, checkedAfter: clock.seconds() - trusted)
    }

    /// The record of `id`, asking storage when the cached one is missing or due for a recheck.
    /// May wait on the network, and with `reindexing` (the default) re-indexes a record of
    /// another output revision (decoding the image): call it off the event loops. Throws when
    /// storage cannot be reached and nothing is known.
    package func resolve(_ id: String, reader: Int? = nil, reindexing: Bool = true) throws(StorageFailure) -> Cached? {
        guard ImageID.isWellFormed(id) else { return nil }
        if let image = library.cached(id) { return image }
        return try resolveWellFormed(id, reader: reader, reindexing: reindexing)
    }

    /// ``resolve(_:reader:reindexing:)`` for an id already checked, and known not to be a
    /// library image.
    private func resolveWellFormed(_ id: String, reader: Int?, reindexing: Bool) throws(StorageFailure) -> Cached? {
        let found = try readThrough(id, reader: reader, reindexing: reindexing)
        guard reindexing, let found, found.needsReindex, let version = found.version else { return found }
        let (group, first) = reindexInProgress.withLock { inProgress -> (DispatchGroup, Bool) in
            if let group = inProgress[id] { return (group, false) }
            let group = DispatchGroup()
            group.enter()
            inProgress[id] = group
            return (group, true)
        }
        guard first else {
            group.wait()
            return records.value(id, reader: reader) ?? found
        }
        defer {
            reindexInProgress.withLock { $0[id] = nil }
            group.leave()
        }
        return try remember(
            id, FetchedRecord(record: found.record, version: version), at: found.checkedAt,
            reindexing: true, reader: reader)
    }

    /// The cached record of `id` while it is trusted, else what storage holds now.
    private func readThrough(_ id: String, reader: Int?, reindexing: Bool) throws(StorageFailure) -> Cached? {
        let now = clock.seconds()
        let cached = records.value(id, reader: reader)
        if let cached, now - cached.checkedAt < recheckSeconds { return cached }
        do {
            if let cached, let version = cached.version {
                switch try backend.revalidate(id, version: version) {
                case .unchanged:
                    return update(id) { $0?.checkedAt = now }
                case .changed(let fresh):
                    return try remember(id, fresh, at: now, reindexing: reindexing, reader: reader)
                case .gone:
                    forget(id)
                    return nil
                }
            }
            guard let fresh = try backend.fetch(id) else {
                forget(id)
                return nil
            }
            return try remember(id, fresh, at: now, reindexing: reindexing, reader: reader)
        } catch {
            // Storage cannot say: what was known stays served (a delete elsewhere is seen
            // once storage answers again).
            if let cached { return cached }
            throw error
        }
    }

    /// Caches what storage holds for `id` (in `reader`'s view too); a record of another output
    /// revision is re-indexed first with `reindexing`, else marked as needing it.
    func remember(
        _ id: String, _ fetched: FetchedRecord, at now: Double,
        reindexing: Bool, reader: Int? = nil
    ) throws(StorageFailure) -> Cached {
        let fresh = try cachedForm(id, fetched, at: now, reindexing: reindexing)
        records.store(id, fresh, reader: reader)
        loaded.forget(id, unless: fresh.record.sha256)  // replaced, perhaps by another replica
        return fresh
    }

    /// What storage holds for `id` as the cache keeps it (with its metadata document), not kept.
    func cachedForm(
        _ id: String, _ fetched: FetchedRecord, at now: Double,
        reindexing: Bool
    ) throws(StorageFailure) -> Cached {
        var fetched = fetched
        var needsReindex = !fetched.record.isCurrentRevision
        if needsReindex && reindexing { (fetched, needsReindex) = reindexed(id, fetched) }
        let json: [UInt8]
        do {
            json = try Self.encodeMetadata(of: fetched.record)
        } catch {
            throw .failed("cannot encode the metadata of \(id): \(error)")
        }
        return Cached(
            record: fetched.record, metadataJSON: json, version: fetched.version, checkedAt: now,
            needsReindex: needsReindex)
    }

    private func update(_ id: String, _ change: (inout Cached?) -> Void) -> Cached? {
        records.update(id, change)
    }

    /// Drops `id` (deleted, perhaps by another replica) and whatever is kept locally for it (the
    /// backend keeps a local original while storage says another id still uses its content).
    func forget(_ id: String) {
        let removed = records.remove(id)
        loaded.forget(id)
        if let removed { backend.forgetOriginal(removed.record.sha256) }
    }

    /// What the record cache holds and has done (`GET /stats`).
    public var recordStats: RecordCacheStats { records.stats }

    /// Rechecks `id` on a background queue unless a recheck is already under way.
    private func refreshInBackground(_ id: String) {
        guard refreshing.withLock({ $0.insert(id).inserted }) else { return }
        remoteReads.submit { [self] in
            defer { _ = refreshing.withLock { $0.remove(id) } }
            _ = records.update(id) { $0?.checkedAt -= recheckSeconds }  // due now
            _ = try? resolve(id)
        }
    }

    /// Re-indexes `id` on the re-indexing queue unless that is already under way.
    func reindexInBackground(_ id: String) {
        guard refreshing.withLock({ $0.insert("reindex:" + id).inserted }) else { return }
        reindexQueue.async { [self] in
            defer { _ = refreshing.withLock { $0.remove("reindex:" + id) } }
            _ = try? resolve(id)
        }
    }

    /// Storage's state, for readiness.
    public func health() -> StorageHealth {
        backend.health()
    }

    // MARK: Encoding

    /// The metadata of `record` as JSON, with its id and display name: what the record cache
    /// keeps beside each record, served as it is by `GET /images/{id}`.
    package static func encodeMetadata(of record: StoredImage) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(RecordMetadata(id: record.id, metadata: record.metadata, name: record.name)))
    }
}
