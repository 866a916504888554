import FoundationEssentials
import SystemResources

/// Filling in the listing index's unknown summaries (``ListingIndex``) from the records: after a
/// rebuild (which lists the ids only), after a writer that crashed between its record and its
/// summary, after images of the earlier layout were moved. In the background, in batches, each a
/// transaction of its own: a crash loses at most a batch, and the next start goes on from what is
/// left (the ids whose summary is unknown, found through a partial index, not a scan).
///
/// A record is read without its lock (a cold read does not hold writers up), then, with the locks
/// of the batch taken and the fence held shared, checked to be the file it read (its stamp): a
/// writer holds the lock from marking the summary unknown until it has set its own, so a summary
/// set under the lock is the summary of the record on disk. An id found without a record under
/// its lock is removed (its writer crashed before writing it).
extension FileSystemBackend {
    /// What one fill did.
    struct SummaryFill: Sendable, Equatable {
        /// Summaries set.
        var filled = 0
        /// Ids removed: no record.
        var removed = 0
        /// Records that could not be read (left unknown: listed from the record, as they come).
        var unreadable = 0
    }

    /// Fills every unknown summary, `batch` ids at a time. With `crashAfter`, stops with
    /// ``SimulatedCrash`` after that many batches, as a crash there would.
    @discardableResult
    func fillSummaries(batch: Int = 128, crashAfter: Int? = nil) throws -> SummaryFill {
        var result = SummaryFill()
        var after: String?
        var batches = 0
        while true {
            let ids = try index.unsummarised(after: after, limit: batch)
            guard let last = ids.last else { break }
            after = last
            if let crashAfter, batches >= crashAfter { throw SimulatedCrash() }
            try fillBatch(ids, &result)
            batches += 1
        }
        return result
    }

    private func fillBatch(_ ids: [String], _ result: inout SummaryFill) throws {
        var read: [String: FetchedRecord] = [:]
        for id in ids { if let fetched = try? fetch(id) { read[id] = fetched } }
        try withRecordLocks(ids) {
            try index.whileWriting {
                var summaries: [ImageSummary] = []
                var gone: [String] = []
                for id in ids {
                    guard let stamp = FileStamp(path: recordPath(id)) else {
                        gone.append(id)
                        continue
                    }
                    var record = read[id]
                    if record?.version != .file(stamp) { record = try? fetch(id) }
                    if let record { summaries.append(ImageSummary(record.record)) } else { result.unreadable += 1 }
                }
                if !summaries.isEmpty { try index.setSummaries(summaries) }
                if !gone.isEmpty { try index.remove(gone) }
                result.filled += summaries.count
                result.removed += gone.count
            }
        }
    }

    /// Schedules ``fillSummaries(batch:crashAfter:)`` on its background queue (one at a time;
    /// further requests while one is pending are the same request).
    func scheduleSummaryFill() {
        let first = summaryFillPending.withLock { pending in
            defer { pending = true }
            return !pending
        }
        guard first else { return }
        summaryFills.async { [weak self] in
            guard let self else { return }
            summaryFillPending.withLock { $0 = false }
            let started = Date()
            do {
                let fill = try fillSummaries()
                guard fill != SummaryFill() else { return }
                logger.notice(
                    "listing summaries filled in from the records",
                    metadata: [
                        "filled": "\(fill.filled)", "removed": "\(fill.removed)", "unreadable": "\(fill.unreadable)",
                        "seconds": "\(DecimalText.fixed(Date().timeIntervalSince(started), places: 2))",
                    ])
            } catch {
                logger.error("listing summaries not filled in", metadata: ["error": "\(error)"])
            }
        }
    }
}
