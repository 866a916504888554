import Glibc

/// Storing a batch of images at once (a bulk import's, ``StorageBackend/storeAll(_:)``): the same
/// steps and order as ``FileSystemBackend/store(_:uploadPath:replacing:)`` for each image — the
/// id into the listing index, the bytes into place, then the record that makes them an image —
/// but each step taken for the whole batch, made durable by one `syncfs` of the data directory's
/// file system instead of an `fsync` per file and per directory (a small image's store cost five
/// `fsync`s, about 6 ms each on the benchmark machine).
///
/// Crash-safety is the single store's: the ids are committed to the index first, their summaries
/// unknown (one transaction), and their summaries set once the records are durable; the originals are renamed into place and the records written to temporary files;
/// one `syncfs` makes all of that durable; only then are the records renamed into place, and a
/// second `syncfs` makes them durable before this returns. So a record under its final name
/// always has its whole original, after a kill or a power cut alike; what a crash leaves — ids
/// without a record, originals without a record, temporary files — is invisible and removed as
/// after a single store's crash, and storing the same files again finishes the job.
extension FileSystemBackend {
    func storeAll(_ batch: [PendingRecord]) throws(StorageFailure) -> [RecordVersion] {
        guard !batch.isEmpty else { return [] }
        let ids = batch.map(\.record.id)
        do {
            try withRecordLocks(ids) {
                try index.whileWriting {
                    for id in ids { try migrateLegacyFiles(of: id) }
                    try index.markChanging(ids)
                    for item in batch {
                        try layout.makeShards(of: item.record.id, durably: false)
                        try Self.rename(item.uploadPath, layout.imagePath(item.record.id))
                    }
                    try writeRecords(batch.map(\.record))
                    try? index.setSummaries(batch.map { ImageSummary($0.record) })
                }
            }
        } catch {
            throw .failed("\(error)")
        }
        var versions: [RecordVersion] = []
        for id in ids {
            let path = layout.recordPath(id)
            guard let stamp = FileStamp(path: path) else { throw .failed("\(path) vanished after it was written") }
            versions.append(.file(stamp))
        }
        return versions
    }

    /// Writes `records` to temporary files (locked until they are in place), syncs the file
    /// system (with them, whatever the batch did before), renames them into place and syncs again.
    private func writeRecords(_ records: [StoredImage]) throws {
        var written: [(fd: Int32, temporary: String, path: String)] = []
        written.reserveCapacity(records.count)
        var placed = 0
        defer {
            for (index, file) in written.enumerated() {
                if index >= placed { unlink(file.temporary) }
                close(file.fd)
            }
        }
        for record in records {
            let (fd, temporary) = try DurableFiles.writeTemporary(Array(record.encoded()), in: temporaryDirectory)
            written.append((fd, temporary, layout.recordPath(record.id)))
        }
        try DurableFiles.syncFileSystem(of: dataDirectory)
        for file in written {
            try Self.rename(file.temporary, file.path)
            placed += 1
        }
        try DurableFiles.syncFileSystem(of: dataDirectory)
    }

    /// Runs `body` holding the record locks of every one of `ids` (``withRecordLock(_:_:)``),
    /// taken in the order of their numbers, as every holder of several takes them.
    func withRecordLocks<Result>(_ ids: [String], _ body: () throws -> Result) throws -> Result {
        let numbers = Set(ids.map(Self.recordLockNumber)).sorted()
        func holding(from position: Int) throws -> Result {
            guard position < numbers.count else { return try body() }
            return try FileLocks.holding(locksDirectory + "/record-\(numbers[position])") {
                try holding(from: position + 1)
            }
        }
        return try holding(from: 0)
    }
}
