import AnimatedImage

/// Originals: getting an image's stored bytes to the frame cache. Uploads and named images are
/// mapped from the backend's local copy (fetched from remote storage first when need be; one
/// smaller than a page is read instead) and kept with their index among the most recently used
/// (``LoadedImages``); library files are read each time, since an operator may rewrite them in
/// place.
extension ImageStore {
    /// Whether the original of `record` is on local disk (or already loaded), so that serving a
    /// frame needs nothing from remote storage.
    package func hasLocalOriginal(_ record: StoredImage) -> Bool {
        record.source == .library || backend.lookupsAreLocal
            || loaded.image(record.id, sha256: record.sha256) != nil || backend.hasLocalOriginal(record)
    }

    /// Starts fetching the original of content id `id` while its record is being looked up
    /// (remote storage only; a no-op for names, whose content is known only from the record).
    package func prefetchOriginal(ofContentID id: String) {
        guard !backend.lookupsAreLocal, ImageID.isContentID(id) else { return }
        backend.prefetchOriginal(id)
    }

    /// Brings the original of `record` to local disk (may wait on the network).
    package func fetchOriginal(_ record: StoredImage) throws(StorageFailure) {
        guard !hasLocalOriginal(record) else { return }
        _ = try backend.originalPath(record)
    }

    /// The image's bytes and index, for the frame cache (on a decode thread): kept from an
    /// earlier load or the upload when it is among the most recently used, else mapped and
    /// indexed now.
    public func loadImage(_ record: StoredImage) throws -> AnimatedImage {
        if let image = loaded.image(record.id, sha256: record.sha256) { return image }
        if record.source == .library {
            // Library files may be rewritten in place by an operator: read, not mapped, and not
            // kept, so their memory goes with the decoder that holds them.
            let bytes: ImageBytes
            do {
                bytes = try loaded.read(library.path(record.id) ?? "")
            } catch {
                throw StoreError.io("\(error)")
            }
            return try AnimatedImage(bytes: bytes, limits: limits, verification: .trusted(frameCount: record.metadata.frameCount))
        }
        let bytes: ImageBytes
        do {
            // Originals are only ever written by Flipbook through an atomic rename and never
            // rewritten in place, so mapping them is safe. One smaller than a page is read: a
            // mapping costs a whole page and one of the process's `vm.max_map_count` mappings.
            let path = try backend.originalPath(record)
            bytes = try record.metadata.fileBytes < Self.smallOriginalBytes ? loaded.read(path) : loaded.map(path)
        } catch let failure as StorageFailure {
            if case .unavailable(let why) = failure { throw StoreError.unavailable(why) }
            throw StoreError.io(failure.description)
        } catch {
            throw StoreError.io("\(error)")
        }
        let image = try AnimatedImage(
            bytes: bytes, limits: limits,
            verification: .trusted(frameCount: record.metadata.frameCount))
        // A size that disagrees with the record means another replica replaced the file after
        // this record was read: serve it (as a read would), but do not keep it under the old hash.
        if bytes.count == record.metadata.fileBytes {
            loaded.keep(image, id: record.id, sha256: record.sha256)
        }
        return image
    }

    /// Originals smaller than this (a page) are read onto the heap rather than mapped.
    static let smallOriginalBytes = 4096

    /// Images kept ready and the memory of every file handed out that is still alive.
    public var fileStats: FileStats { loaded.stats }
}
