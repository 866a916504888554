import AnimatedImage

/// Where uploaded and named images are kept, behind ``ImageStore``: a directory (``FileSystemBackend``,
/// `storage.backend = fs`) or an S3 bucket with a local cache of originals (``S3Backend``,
/// `storage.backend = s3`). The store keeps what is common to both — the records in memory and
/// when to recheck them, verifying uploads, the library, the images ready for the frame cache —
/// and asks the backend only for what lives in storage.
///
/// Every method may be slow (disk or network) unless ``lookupsAreLocal``; none is called on an
/// event loop then. Records are immutable values; a record's ``RecordVersion`` tells the backend
/// cheaply whether it changed since it was read.
protocol StorageBackend: Sendable {
    /// True when reading a record is a local file-system call (cheap enough for an event loop);
    /// false when it may wait on the network.
    var lookupsAreLocal: Bool { get }

    /// The local directory uploads are streamed into, on the file system of whatever the
    /// backend moves them to.
    var uploadDirectory: String { get }

    /// The record stored under `id` now, or nil when there is none.
    func fetch(_ id: String) throws(StorageFailure) -> FetchedRecord?

    /// Whether the record of `id` read at `version` is still the current one.
    func revalidate(_ id: String, version: RecordVersion) throws(StorageFailure) -> Revalidation

    /// A local file holding the original bytes of `record`, immutable while it exists (it may be
    /// memory-mapped); a remote original is fetched into the local cache first.
    func originalPath(_ record: StoredImage) throws(StorageFailure) -> String

    /// Whether ``originalPath(_:)`` would answer without waiting on the network.
    func hasLocalOriginal(_ record: StoredImage) -> Bool

    /// Starts bringing the original of content `sha256` to local disk, in the background (a
    /// first frame then waits for one round trip, not two: the record and the original are
    /// fetched at once). Nothing happens when it is local already or does not exist.
    func prefetchOriginal(_ sha256: String)

    /// Makes `record` durable with the verified upload at `uploadPath` (its SHA-256 is
    /// `record.sha256`), replacing `previous` (the record now under the same id, if any). Returns
    /// the version written. When it returns, the image survives a crash of this process and is
    /// visible to every replica; before, no replica can see part of it. The file at `uploadPath`
    /// is the backend's afterwards (moved or removed).
    func store(_ record: StoredImage, uploadPath: String, replacing previous: StoredImage?) throws(StorageFailure)
        -> RecordVersion

    /// Stores every one of `batch` as ``store(_:uploadPath:replacing:)`` stores one (a bulk
    /// import's), returning their versions in order. When it returns, all of them survive a crash;
    /// a crash before leaves each either whole (its original, its record, listed) or invisible.
    /// Backends that can make a batch durable at once (one `syncfs` instead of an `fsync` per
    /// file) do; the others store one after another (the default).
    func storeAll(_ batch: [PendingRecord]) throws(StorageFailure) -> [RecordVersion]

    /// Replaces the stored record of `record.id` with `record` (same original, metadata derived
    /// again) if it is still the one read at `version`; the version written, or nil (nothing
    /// written) when it was replaced or deleted meanwhile, by this or another replica.
    func rewrite(_ record: StoredImage, over version: RecordVersion) throws(StorageFailure) -> RecordVersion?

    /// Removes `record` (and its original, unless something else still uses it); false when it
    /// was already gone.
    func delete(_ record: StoredImage) throws(StorageFailure) -> Bool

    /// Stored images in byte order of their ids, after `cursor`, at most `limit`, and whether
    /// more follow: each with its listing summary when the backend keeps them (fs), else the id
    /// alone (s3: the store reads the records).
    func listImages(after cursor: String?, limit: Int) throws(StorageFailure) -> (entries: [ListedEntry], more: Bool)

    /// Whether storage takes writes and serves reads right now (readiness), without waiting on
    /// the network (a local probe is fine).
    func health() -> StorageHealth

    /// False while the backing storage is known to be unreachable (its last request failed):
    /// then cached records are served without waiting for a recheck. Cheap: no I/O.
    var isReachable: Bool { get }

    /// An image of content `sha256` was found deleted (by another replica): forgets whatever the
    /// backend keeps locally for that content (a cached original) once storage says no image
    /// uses it any more. Decided from storage, never from the records in memory (only some).
    func forgetOriginal(_ sha256: String)

    /// Where replicas that share no disk share their products through this storage; nil when
    /// they share it otherwise (replicas of one data directory share its products).
    var sharedProducts: (any SharedProducts)? { get }
}

extension StorageBackend {
    /// ``storeAll(_:)`` as one ``store(_:uploadPath:replacing:)`` after another.
    func storeAll(_ batch: [PendingRecord]) throws(StorageFailure) -> [RecordVersion] {
        var versions: [RecordVersion] = []
        for item in batch {
            versions.append(try store(item.record, uploadPath: item.uploadPath, replacing: item.previous))
        }
        return versions
    }
}

/// One image of a page of the listing: its id, and its summary when the backend has it at hand.
struct ListedEntry: Sendable, Equatable {
    var id: String
    var summary: ImageSummary?
}

/// A record to store with its verified upload (``StorageBackend/storeAll(_:)``).
struct PendingRecord: Sendable {
    var record: StoredImage
    /// The upload's temporary file: the backend's afterwards.
    var uploadPath: String
    /// The record now under the same id, if any.
    var previous: StoredImage?
}

/// How a record was read, for rechecking it: the meta file's modification time and size (fs),
/// or the object's ETag (s3).
enum RecordVersion: Sendable, Equatable {
    case file(FileStamp)
    case etag(String)
}

/// A record and the version it was read at.
struct FetchedRecord: Sendable {
    var record: StoredImage
    var version: RecordVersion
}

/// The answer to a recheck.
enum Revalidation: Sendable {
    case unchanged
    case changed(FetchedRecord)
    case gone
}

/// Why storage could not do something.
package enum StorageFailure: Error, CustomStringConvertible, Sendable {
    /// Storage cannot be reached or refused for now (network, timeouts, 5xx after retries):
    /// the client may retry later (503 with `Retry-After`).
    case unavailable(String)
    /// Anything else (a disk error, a refused credential, a malformed object): 500, logged.
    case failed(String)

    package var description: String {
        switch self {
        case .unavailable(let why): "storage unavailable: \(why)"
        case .failed(let why): why
        }
    }
}

/// What readiness reports about storage.
public struct StorageHealth: Sendable, Equatable {
    public enum Status: String, Sendable {
        /// Uploads are stored and every image can be read.
        case ready
        /// The backing storage cannot be reached: what is local (cached originals, frames in
        /// the cache, library images) is still served; uploads and images not yet local get 503.
        case degraded
        /// Nothing can be stored (the local data directory is not writable).
        case down
    }

    public var status: Status
    /// Why, when not ready.
    public var detail: String?

    public init(_ status: Status, detail: String? = nil) {
        self.status = status
        self.detail = detail
    }
}
