import Synchronization
import SystemResources

/// Listing: `GET /images` pages, in id byte order, stored and library images merged. A page
/// costs its own size: the backend answers the images after the cursor from an ordered index
/// that holds each image's summary (fs: no record is read) or from ListObjectsV2 (s3: each record
/// is then read through the record cache without filling it — listing the whole library leaves
/// the cache holding what it held).
extension ImageStore {
    /// Summaries in id order, from after `cursor`, at most `limit`, and the cursor of the next page.
    package func list(after cursor: String?, limit: Int) throws(StorageFailure) -> (images: [ImageSummary], next: String?) {
        let stored = try backend.listImages(after: cursor, limit: limit)
        var known: [String: ImageSummary] = [:]
        for entry in stored.entries { if let summary = entry.summary { known[entry.id] = summary } }
        let merged = Array(Set(stored.entries.map(\.id) + library.ids(after: cursor, limit: limit + 1)).sorted())
        let page = Array(merged.prefix(limit))
        let more = stored.more || merged.count > limit
        // A page is not held up by re-indexing: records of another output revision are listed as
        // stored and re-indexed in the background.
        var found = page.map { id in library.cached(id).map { ImageSummary($0.record) } ?? known[id] }
        let unknown = found.indices.filter { found[$0] == nil }
        if backend.lookupsAreLocal {
            for i in unknown { found[i] = listedRecord(page[i]).map(ImageSummary.init) }
        } else if !unknown.isEmpty {
            let results = Mutex(found)
            remoteReads.perform(iterations: unknown.count) { n in
                let i = unknown[n]
                let summary = self.listedRecord(page[i]).map(ImageSummary.init)
                results.withLock { $0[i] = summary }
            }
            found = results.withLock { $0 }
        }
        let images = found.compactMap { $0 }
        for image in images where image.source != .library && !image.isCurrentRevision {
            reindexInBackground(image.id)
        }
        return (images, more ? page.last : nil)
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
