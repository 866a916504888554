import Dispatch
import Synchronization

/// Listing: `GET /images` pages, in id byte order, stored and library images merged. A page
/// costs its own size: the backend answers ids after the cursor from an ordered index (fs) or
/// ListObjectsV2 (s3), and each record is read through the record cache without filling it —
/// listing the whole library leaves the cache holding what it held.
extension ImageStore {
    /// Ids in order, from after `cursor`, at most `limit`, and the cursor of the next page.
    package func list(after cursor: String?, limit: Int) throws(StorageFailure) -> (images: [StoredImage], next: String?) {
        let stored = try backend.listIDs(after: cursor, limit: limit)
        let merged = Array(Set(stored.ids + library.ids(after: cursor, limit: limit + 1)).sorted())
        let page = Array(merged.prefix(limit))
        let more = stored.more || merged.count > limit
        // A page is not held up by re-indexing: records of another output revision are listed as
        // stored and re-indexed in the background.
        var found = [StoredImage?](repeating: nil, count: page.count)
        if backend.lookupsAreLocal {
            for (i, id) in page.enumerated() { found[i] = listedRecord(id) }
        } else {
            let results = Mutex(found)
            DispatchQueue.concurrentPerform(iterations: page.count) { i in
                let record = self.listedRecord(page[i])
                results.withLock { $0[i] = record }
            }
            found = results.withLock { $0 }
        }
        for record in found.compactMap({ $0 }) where record.source != .library && !record.isCurrentRevision {
            reindexInBackground(record.id)
        }
        return (found.compactMap { $0 }, more ? page.last : nil)
    }

    /// The record of `id` for a listing: the cached one (rechecked when due), else what storage
    /// holds now, not kept in the cache. Nil when there is none or storage cannot say.
    func listedRecord(_ id: String) -> StoredImage? {
        guard ImageID.isWellFormed(id) else { return nil }
        if let image = library.cached(id) { return image.record }
        if records.contains(id) { return record(id, reindexing: false) }
        return (try? backend.fetch(id))??.record
    }
}
