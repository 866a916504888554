import AnimatedImage
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The images Flipbook serves: uploads and named images in the data directory, plus the files
/// of read-only library directories.
///
/// Layout of the data directory (several replicas may share it):
/// - `objects/<id>` — the image's bytes, exactly as uploaded;
/// - `meta/<id>.json` — its ``StoredImage`` record; its presence is what makes an image exist
///   (written last on upload, removed first on delete), so a crash never leaves a half image;
/// - `tmp/` — uploads in progress and files being replaced; emptied at start-up.
///
/// Records are cached in memory; a miss, or a record whose file changed, is looked up on disk,
/// so an image uploaded or deleted through another replica is seen at once. Pixels are never
/// held here: ``loadImage(_:)`` hands the frame cache the file's bytes and index, kept for the
/// most recently used images (``defaultMaxLoadedImages``). Data-directory files are mapped, not
/// copied: their pages are page cache (shared by replicas, reclaimable), not heap; see
/// ``fileStats``.
public final class ImageStore: @unchecked Sendable {
    /// Why an upload was not stored.
    public enum StoreError: Error, Sendable {
        /// Not an image format Flipbook reads (415).
        case unsupportedFormat(String)
        /// An image that cannot be decoded or exceeds a limit (422).
        case undecodable(String)
        /// The id names a library image, which cannot be replaced or deleted (409).
        case readOnly(String)
        /// The disk failed (500, logged).
        case io(String)
    }

    private struct Cached {
        var record: StoredImage
        var metadataJSON: [UInt8]
        /// The meta file's modification time and size when read; nil for library images.
        var stamp: FileStamp?
        /// When the meta file was last checked (monotonic seconds).
        var checkedAt: Double = 0
    }

    /// How long a cached record is trusted before its file is checked again: another replica's
    /// delete or replace is seen within this time, and a busy frame route costs no `stat` per
    /// request.
    static let recheckSeconds = 1.0

    /// How many images (a file mapping plus its index) the store keeps ready for the frame cache,
    /// least recently used dropped first, so recreating a decoder costs neither a read nor
    /// re-indexing. Bounded by count because each mapping is one of the process's
    /// `vm.max_map_count` (65530 by default) memory maps, which the frame cache's decoders and
    /// the allocator share; the mapped bytes themselves are page cache the kernel can reclaim.
    public static let defaultMaxLoadedImages = 4096

    public let dataDirectory: String
    let objectsDirectory: String
    let metaDirectory: String
    let temporaryDirectory: String
    public let limits: DecodeLimits
    private let logger: Logger
    private let lock = NSLock()
    private let commitLock = NSLock()
    private var cache: [String: Cached] = [:]
    private var libraryPaths: [String: String] = [:]
    private let loaded: LoadedImages

    /// Opens (creating it if needed) the data directory and registers the library directories'
    /// images. Library files that are not images, or break a limit, are skipped with a warning.
    public init(dataDirectory: String, libraryDirectories: [String] = [], limits: DecodeLimits = .default,
                maxLoadedImages: Int = ImageStore.defaultMaxLoadedImages,
                logger: Logger = Logger(label: "flipbook.storage")) throws {
        self.dataDirectory = dataDirectory
        loaded = LoadedImages(limit: maxLoadedImages)
        objectsDirectory = dataDirectory + "/objects"
        metaDirectory = dataDirectory + "/meta"
        temporaryDirectory = dataDirectory + "/tmp"
        self.limits = limits
        self.logger = logger
        for directory in [dataDirectory, objectsDirectory, metaDirectory, temporaryDirectory] {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw StoreError.io("cannot create \(directory): \(error.localizedDescription)")
            }
        }
        removeStaleTemporaryFiles()
        for directory in libraryDirectories {
            registerLibrary(directory)
        }
        let stored = (try? FileManager.default.contentsOfDirectory(atPath: metaDirectory))?.count ?? 0
        logger.info("image store open", metadata: [
            "dataDir": "\(dataDirectory)", "stored": "\(stored)", "library": "\(libraryPaths.count)"])
    }

    // MARK: Reading

    /// The record of `id`, or nil when there is no such image.
    public func record(_ id: String) -> StoredImage? {
        lookup(id)?.record
    }

    /// The record and its encoded metadata document.
    public func recordAndMetadata(_ id: String) -> (StoredImage, [UInt8])? {
        lookup(id).map { ($0.record, $0.metadataJSON) }
    }

    private func lookup(_ id: String) -> Cached? {
        guard ImageID.isWellFormed(id) else { return nil }
        lock.lock()
        let cached = cache[id]
        lock.unlock()
        if let cached, cached.stamp == nil { return cached }  // library images do not change
        let now = Self.monotonicSeconds()
        if let cached, now - cached.checkedAt < Self.recheckSeconds { return cached }
        let metaPath = metaPath(id)
        guard let stamp = FileStamp(path: metaPath) else {
            if cached != nil {
                lock.lock()
                cache[id] = nil
                lock.unlock()
            }
            loaded.forget(id)  // deleted, perhaps by another replica: let its mapping go
            return nil
        }
        if var cached, cached.stamp == stamp {
            cached.checkedAt = now
            lock.lock()
            cache[id] = cached
            lock.unlock()
            return cached
        }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let record = try decoder.decode(StoredImage.self, from: Data(DurableFiles.read(metaPath)))
            let fresh = Cached(record: record, metadataJSON: try Self.encodeMetadata(record.metadata), stamp: stamp,
                               checkedAt: now)
            lock.lock()
            cache[id] = fresh
            lock.unlock()
            loaded.forget(id, unless: record.sha256)  // replaced, perhaps by another replica
            return fresh
        } catch {
            logger.error("unreadable image record", metadata: ["id": "\(id)", "error": "\(error)"])
            return nil
        }
    }

    /// Ids in order, from after `cursor`, at most `limit`, and the cursor of the next page.
    public func list(after cursor: String?, limit: Int) -> (images: [StoredImage], next: String?) {
        var ids = Set((try? FileManager.default.contentsOfDirectory(atPath: metaDirectory)) ?? [])
            .compactMap { $0.hasSuffix(".json") && !$0.hasPrefix(".") ? String($0.dropLast(5)) : nil }
        lock.lock()
        ids += libraryPaths.keys
        lock.unlock()
        let sorted = Set(ids).sorted().filter { cursor == nil || $0 > cursor! }
        var page: [StoredImage] = []
        var last: String?
        for id in sorted {
            if page.count == limit { break }
            last = id
            if let record = record(id) { page.append(record) }
        }
        let more = sorted.last.map { last != nil && $0 > last! } ?? false
        return (page, more ? last : nil)
    }

    /// The image's bytes and index, for the frame cache (on a decode thread): kept from an
    /// earlier load or the upload when it is among the most recently used, else mapped and
    /// indexed now.
    public func loadImage(_ record: StoredImage) throws -> AnimatedImage {
        if let image = loaded.image(record.id, sha256: record.sha256) { return image }
        let path = objectPath(record)
        // Data-directory objects are only ever written by Flipbook through an atomic rename and
        // removed by unlink, so a mapping of one never changes under us. Library files are the
        // operator's and may be rewritten in place, which would make reading a mapping of them
        // raise SIGBUS: those are read onto the heap (counted in `fileStats.heapBytes`), and not
        // kept, so their memory goes with the decoder that holds them.
        let isLibrary = record.source == .library
        let bytes: ImageBytes
        do {
            bytes = isLibrary ? try loaded.read(path) : try loaded.map(path)
        } catch {
            throw StoreError.io("\(error)")
        }
        let image = try AnimatedImage(bytes: bytes, limits: limits,
                                      verification: .trusted(frameCount: record.metadata.frameCount))
        // A size that disagrees with the record means another replica replaced the file after
        // this record was read: serve it (as a read would), but do not keep it under the old hash.
        if !isLibrary, bytes.count == record.metadata.fileBytes {
            loaded.keep(image, id: record.id, sha256: record.sha256)
        }
        return image
    }

    /// Images kept ready and the memory of every file handed out that is still alive.
    public var fileStats: FileStats { loaded.stats }

    // MARK: Writing

    /// A temporary file for an upload that is about to arrive.
    public func beginUpload() throws -> UploadFile {
        do {
            return try UploadFile(directory: temporaryDirectory)
        } catch {
            throw StoreError.io("\(error)")
        }
    }

    /// Indexes a finished upload and stores it under its content id (`name` nil) or under
    /// `name`. Returns the record and whether it is new (201) rather than already there (200).
    /// Slow (verifies every frame): call it off the event loops. The upload is read through a
    /// mapping of its temporary file, which stays valid across the rename into place, so the
    /// verified image is kept for the frame cache's first request.
    public func commit(_ upload: UploadFile, name: String? = nil) throws -> (StoredImage, created: Bool) {
        defer { upload.discard() }
        let sha256: String
        do {
            sha256 = try upload.finish()
        } catch {
            throw StoreError.io("\(error)")
        }
        let id = name ?? sha256
        lock.lock()
        let isLibrary = name.map { libraryPaths[$0] != nil } ?? false
        lock.unlock()
        if let name, isLibrary {
            throw StoreError.readOnly("\(name) is a library image and cannot be replaced")
        }
        if let existing = record(id), existing.sha256 == sha256 {
            return (existing, false)
        }
        let bytes: ImageBytes
        do {
            bytes = try loaded.map(upload.path)
        } catch let failure as MappedFile.Failure where failure.isEmpty {
            bytes = ImageBytes([])  // nothing to map: rejected below like any non-image
        } catch {
            throw StoreError.io("\(error)")
        }
        let image: AnimatedImage
        do {
            image = try AnimatedImage(bytes: bytes, limits: limits, verification: .full)
        } catch AnimatedImageError.unsupportedFormat {
            throw StoreError.unsupportedFormat("the body is not a GIF, PNG/APNG or WebP image")
        } catch {
            throw StoreError.undecodable("\(error)")
        }
        // Check-and-store is one step per store, so concurrent uploads of the same new bytes get
        // one 201 and 200s. (Replicas racing on a shared directory may both answer 201; the
        // rename makes the outcome the same image either way.)
        commitLock.lock()
        defer { commitLock.unlock() }
        lock.lock()
        cache[id] = nil  // decide from the disk, not from a record another replica may have deleted
        lock.unlock()
        let current = record(id)
        if let current, current.sha256 == sha256 {
            return (current, false)
        }
        let replaced = current != nil
        let record = StoredImage(id: id, sha256: sha256, source: name == nil ? .upload : .named,
                                 storedAt: Date(), metadata: ImageMetadata(image: image, id: id))
        do {
            try DurableFiles.moveIntoPlace(upload.path, objectPath(record))
            try DurableFiles.write(Array(Self.encodeRecord(record)), to: metaPath(id),
                                   temporaryDirectory: temporaryDirectory)
        } catch {
            throw StoreError.io("\(error)")
        }
        lock.lock()
        cache[id] = nil
        lock.unlock()
        loaded.keep(image, id: id, sha256: sha256)
        _ = lookup(id)
        logger.info("image stored", metadata: ["id": "\(id)", "bytes": "\(bytes.count)",
                                               "frames": "\(image.frameCount)", "replaced": "\(replaced)"])
        return (record, !replaced)
    }

    /// Deletes an uploaded or named image; false when there was none.
    public func delete(_ id: String) throws -> Bool {
        guard ImageID.isWellFormed(id) else { return false }
        lock.lock()
        let isLibrary = libraryPaths[id] != nil
        lock.unlock()
        if isLibrary { throw StoreError.readOnly("\(id) is a library image and cannot be deleted") }
        guard let record = record(id) else { return false }
        do {
            let removed = try DurableFiles.remove(metaPath(id))
            try DurableFiles.remove(objectPath(record))
            lock.lock()
            cache[id] = nil
            lock.unlock()
            loaded.forget(id)
            if removed { logger.info("image deleted", metadata: ["id": "\(id)"]) }
            return removed
        } catch {
            throw StoreError.io("\(error)")
        }
    }

    /// Whether a file can be created in the data directory right now (readiness).
    public var isWritable: Bool {
        let probe = temporaryDirectory + "/.ready-" + UUID().uuidString
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        close(fd)
        unlink(probe)
        return true
    }

    // MARK: Paths and encoding

    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    func metaPath(_ id: String) -> String { metaDirectory + "/" + id + ".json" }

    func objectPath(_ record: StoredImage) -> String {
        if record.source == .library {
            lock.lock()
            defer { lock.unlock() }
            return libraryPaths[record.id] ?? ""
        }
        return objectsDirectory + "/" + record.id
    }

    static func encodeMetadata(_ metadata: ImageMetadata) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(metadata))
    }

    static func encodeRecord(_ record: StoredImage) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(record)
    }

    private func removeStaleTemporaryFiles() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporaryDirectory)) ?? [] {
            // Only files old enough that no live replica can still be writing them.
            let path = temporaryDirectory + "/" + name
            if let stamp = FileStamp(path: path), Date().timeIntervalSince1970 - stamp.modified > 3600 {
                unlink(path)
            }
        }
    }

    private func registerLibrary(_ directory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            logger.warning("library directory not readable", metadata: ["dir": "\(directory)"])
            return
        }
        for name in names.sorted() where !name.hasPrefix(".") {
            let lower = name.lowercased()
            guard [".gif", ".png", ".apng", ".webp"].contains(where: { lower.hasSuffix($0) }) else { continue }
            guard ImageID.validateName(name) == nil else {
                logger.warning("library file name is not a valid id; skipped", metadata: ["file": "\(name)"])
                continue
            }
            let path = directory + "/" + name
            do {
                let bytes = try DurableFiles.read(path)
                let image = try AnimatedImage(bytes: bytes, limits: limits, verification: .full)
                let digest = ContentHash.sha256Hex(bytes)
                let record = StoredImage(id: name, sha256: digest, source: .library, storedAt: Date(),
                                         metadata: ImageMetadata(image: image, id: name))
                libraryPaths[name] = path
                cache[name] = Cached(record: record, metadataJSON: try Self.encodeMetadata(record.metadata), stamp: nil)
            } catch {
                logger.warning("library file skipped", metadata: ["file": "\(path)", "error": "\(error)"])
            }
        }
    }
}
