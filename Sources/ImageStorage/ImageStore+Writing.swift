import AnimatedImage
import FoundationEssentials
import FrameCache
import Synchronization

/// Writing: uploads (received into a temporary file, verified frame by frame within the
/// decode-memory budget, then stored under their content id or a name) and deletes. Each decides
/// from what storage holds now, not from a cached record another replica may have changed.
extension ImageStore {
    /// Throws ``StoreError/unavailable(_:)`` while storage is known to be unreachable: an upload
    /// is refused then before its body is read (no file is made to find that out).
    public func checkReachable() throws {
        guard backend.isReachable else { throw StoreError.unavailable("storage cannot be reached") }
    }

    /// A temporary file for an upload that is about to arrive.
    public func beginUpload() throws -> UploadFile {
        // Known to be unreachable: refuse before the body is sent, not after.
        try checkReachable()
        do {
            return try UploadFile(directory: backend.uploadDirectory)
        } catch {
            throw StoreError.io("\(error)")
        }
    }

    /// Indexes a finished upload and stores it under its content id (`name` nil) or under
    /// `name`. Returns the record and whether it is new (201) rather than already there (200).
    /// Slow (verifies every frame, and may wait on storage): call it off the event loops. The
    /// upload is read through a mapping of its temporary file, which stays valid across the move
    /// into place, so the verified image is kept for the frame cache's first request.
    /// `visit`, when given, sees every frame's composited canvas as the verification makes it
    /// (``AnimatedImage/verifyingFrames(visiting:)``; not called when the bytes are stored already).
    public func commit(
        _ upload: UploadFile, name: String? = nil, origin: SourceOrigin? = nil, displayName: String? = nil,
        visit: ((AnimatedImage, Int, Canvas) throws -> Void)? = nil
    ) throws
        -> (
            StoredImage, created: Bool
        )
    {
        defer { upload.discard() }
        let (id, sha256, image): (String, String, AnimatedImage)
        switch try check(upload, name: name, durably: true, visit: visit) {
        case .stored(let record): return (record, false)
        case .new(let newID, let hash, let verified): (id, sha256, image) = (newID, hash, verified)
        }
        // (Replicas racing on shared storage may both answer 201; the outcome is the same image
        // either way.)
        return try commitLock.withLock { _ throws -> (StoredImage, created: Bool) in
            // Decide from storage, not from a record another replica may have deleted.
            records.remove(id)
            let current = try storeResolve(id, reindexing: false)
            if let current, current.record.sha256 == sha256 {
                return (current.record, false)
            }
            let record = StoredImage(
                id: id, sha256: sha256, source: name == nil ? .upload : .named,
                storedAt: Date(), metadata: ImageMetadata(image: image),
                outputRevision: AnimatedImage.outputRevision, origin: origin, name: displayName)
            let version: RecordVersion
            do throws(StorageFailure) {
                version = try backend.store(record, uploadPath: upload.path, replacing: current?.record)
            } catch {
                throw Self.storeError(error)
            }
            _ = try? remember(id, FetchedRecord(record: record, version: version), at: clock.seconds(), reindexing: false)
            loaded.keep(image, id: id, sha256: sha256)
            logger.info(
                "image stored",
                metadata: [
                    "id": "\(id)", "bytes": "\(upload.byteCount)",
                    "frames": "\(image.frameCount)", "replaced": "\(current != nil)",
                ])
            return (record, current == nil)
        }
    }

    /// What ``check(_:name:durably:visit:)`` found an upload to be.
    enum CheckedUpload {
        /// Stored already, under the same id with the same bytes.
        case stored(StoredImage)
        /// New (or replacing other bytes under `id`), verified.
        case new(id: String, sha256: String, image: AnimatedImage)
    }

    /// A finished upload's content id, then whether it is stored already, then (when it is not)
    /// its verification (``verify(_:visit:)``). `durably` false leaves the upload's file to be
    /// flushed with its batch (``ImageStore/commitAll(_:)``).
    func check(
        _ upload: UploadFile, name: String?, durably: Bool, visit: ((AnimatedImage, Int, Canvas) throws -> Void)?
    ) throws -> CheckedUpload {
        let sha256: String
        do {
            sha256 = try upload.finish(durably: durably)
        } catch {
            throw StoreError.io("\(error)")
        }
        let id = name ?? sha256
        if let name, library.path(name) != nil {
            throw StoreError.readOnly("\(name) is a library image and cannot be replaced")
        }
        if let existing = try storeResolve(id, reindexing: true), existing.record.sha256 == sha256 {
            return .stored(existing.record)
        }
        let bytes: ImageBytes
        do {
            bytes = try loaded.map(upload.path)
        } catch let failure as MappedFile.Failure where failure.isEmpty {
            bytes = ImageBytes([])  // nothing to map: rejected below like any non-image
        } catch {
            throw StoreError.io("\(error)")
        }
        return .new(id: id, sha256: sha256, image: try verify(bytes, visit: visit))
    }

    /// Indexes an upload (refusing it if it breaks a limit, ``DecodeLimits/maxDecodeBytes``
    /// included), then decodes every frame once with the memory that takes reserved from the
    /// decode-memory budget, waiting while it is spent. With `visit`, the frames are composited
    /// too and shown to it; the reservation is then a cold render's (a canvas, and a frame
    /// encoded), which the visitor may use.
    func verify(_ bytes: ImageBytes, visit: ((AnimatedImage, Int, Canvas) throws -> Void)? = nil) throws -> AnimatedImage {
        do {
            let indexed = try AnimatedImage(bytes: bytes, limits: limits, verification: .structural)
            let visiting = visit.map { visit in { (index: Int, canvas: Canvas) throws in try visit(indexed, index, canvas) } }
            guard let decodeBudget else { return try indexed.verifyingFrames(visiting: visiting) }
            let memory = indexed.decodeMemory
            let reservation: DecodeReservation
            do throws(DecodeMemoryBudget.Refusal) {
                reservation = try decodeBudget.reserve(
                    visit == nil ? memory.verificationBytes : max(memory.verificationBytes, memory.coldRenderBytes))
            } catch .tooLarge(let needed, let capacity) {
                throw AnimatedImageError.limitExceeded(.maxDecodeBytes, value: needed, limit: capacity)
            } catch .queueFull, .closed {
                throw StoreError.busy("too many uploads wait for memory to verify them")
            }
            defer { reservation.release() }
            return try indexed.verifyingFrames(visiting: visiting)
        } catch AnimatedImageError.unsupportedFormat {
            throw StoreError.unsupportedFormat("the body is not a GIF, PNG/APNG or WebP image")
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.undecodable("\(error)")
        }
    }

    /// Deletes an uploaded or named image; false when there was none.
    public func delete(_ id: String) throws -> Bool {
        guard ImageID.isWellFormed(id) else { return false }
        if library.path(id) != nil { throw StoreError.readOnly("\(id) is a library image and cannot be deleted") }
        records.remove(id)  // decide from storage
        guard let cached = try storeResolve(id, reindexing: false) else { return false }
        let removed: Bool
        do throws(StorageFailure) {
            removed = try backend.delete(cached.record)
        } catch {
            throw Self.storeError(error)
        }
        // The backend's delete dealt with the original (kept while another id uses it).
        records.remove(id)
        loaded.forget(id)
        if removed { logger.info("image deleted", metadata: ["id": "\(id)"]) }
        return removed
    }

    func storeResolve(_ id: String, reindexing: Bool) throws(StoreError) -> Cached? {
        do {
            return try resolve(id, reindexing: reindexing)
        } catch {
            throw Self.storeError(error)
        }
    }

    static func storeError(_ failure: StorageFailure) -> StoreError {
        switch failure {
        case .unavailable(let why): .unavailable(why)
        case .failed(let why): .io(why)
        }
    }
}
