import AnimatedImage
import Crypto

/// Re-indexing: a record written by a build of another ``AnimatedImage/outputRevision`` carries
/// metadata that build derived (frame counts, delays, timestamps may differ today), so it is
/// derived again from the stored original, exactly as an upload is, and written back.
///
/// It happens when the record is first loaded off the event loops (a lookup, a frame request, a
/// background recheck; a listing queues it), never on an event loop. Writing back is
/// conditional on the record not having changed since it was read (``StorageBackend/rewrite(_:over:)``:
/// under the record's lock on a shared data directory, `If-Match` on S3), so a replica never
/// overwrites an image another replica replaced or deleted meanwhile; two replicas re-indexing
/// the same record write the same document.
extension ImageStore {
    /// `fetched` with its metadata derived again by this build, and whether it still needs
    /// re-indexing (only after a failure that may pass: the decode-memory budget's queue was
    /// full, or the original changed under the record). A file this build refuses keeps the
    /// metadata it was stored with (logged).
    func reindexed(_ id: String, _ fetched: FetchedRecord) -> (FetchedRecord, needsReindex: Bool) {
        let stored = fetched.record
        let bytes: ImageBytes
        do {
            bytes = try loaded.map(backend.originalPath(stored))
        } catch {
            logger.warning("image not re-indexed: its original cannot be read", metadata: ["id": "\(id)", "error": "\(error)"])
            return (fetched, true)
        }
        // A named image's original is replaced by a rename before its record: only bytes of this
        // record's content are indexed for it.
        var hasher = SHA256()
        bytes.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        let hash = ContentHash.hex(hasher.finalize())
        guard hash == stored.sha256 else { return (fetched, true) }
        let image: AnimatedImage
        do {
            image = try verify(bytes)
        } catch StoreError.busy {
            return (fetched, true)
        } catch {
            logger.warning(
                "image kept the metadata of an earlier output revision: this build refuses its file",
                metadata: ["id": "\(id)", "revision": "\(stored.outputRevision ?? 0)", "error": "\(error)"])
            return (fetched, false)
        }
        var record = stored
        record.metadata = ImageMetadata(image: image)
        record.outputRevision = AnimatedImage.outputRevision
        loaded.keep(image, id: stored.id, sha256: stored.sha256)
        var version = fetched.version
        do throws(StorageFailure) {
            if let written = try backend.rewrite(record, over: fetched.version) {
                version = written
                logger.notice(
                    "image re-indexed",
                    metadata: [
                        "id": "\(id)", "fromRevision": "\(stored.outputRevision ?? 0)",
                        "toRevision": "\(AnimatedImage.outputRevision)",
                        "frames": "\(stored.metadata.frameCount) -> \(record.metadata.frameCount)",
                    ])
            }
            // else: replaced or deleted meanwhile; the re-derived record is served until the
            // next recheck (at the old version) reads what is stored now.
        } catch {
            logger.warning(
                "re-indexed record not written back; re-derived in memory",
                metadata: ["id": "\(id)", "error": "\(error)"])
        }
        return (FetchedRecord(record: record, version: version), false)
    }
}
