import AnimatedImage
import FoundationEssentials

/// Storing uploads in batches (`flipbook import`): each upload is checked and verified exactly as
/// ``ImageStore/commit(_:name:origin:displayName:visit:)`` does, and the new ones are stored
/// together (``StorageBackend/storeAll(_:)``: on a data directory, one `syncfs` for the batch
/// instead of five `fsync`s per image).
extension ImageStore {
    /// What ``commitAll(_:)`` did with one upload: its record and whether it is new, or why not.
    public typealias BatchOutcome = Result<(StoredImage, created: Bool), StoreError>

    /// Stores each of `uploads` under its content id, as ``commit(_:name:origin:displayName:visit:)``
    /// would, and returns what became of each, in order: an upload refused (not an image, over a
    /// limit) does not hold the others back; a failure of storage fails the uploads of the batch
    /// it stored. The bytes are flushed with the batch, not one upload at a time. The verified
    /// images are not kept for the frame cache (an import serves nothing). Discards the uploads.
    public func commitAll(_ uploads: [UploadFile]) -> [BatchOutcome] {
        defer { for upload in uploads { upload.discard() } }
        var outcomes = [BatchOutcome?](repeating: nil, count: uploads.count)
        var verified: [(position: Int, sha256: String, image: AnimatedImage)] = []
        for (position, upload) in uploads.enumerated() {
            do {
                switch try check(upload, name: nil, durably: false, visit: nil) {
                case .stored(let record): outcomes[position] = .success((record, false))
                case .new(_, let sha256, let image): verified.append((position, sha256, image))
                }
            } catch {
                outcomes[position] = .failure(error as? StoreError ?? .io("\(error)"))
            }
        }
        commitLock.withLock { _ in
            var batch: [PendingRecord] = []
            var positions: [Int] = []
            var firstOfID: [String: Int] = [:]
            for item in verified {
                let id = item.sha256
                do throws(StoreError) {
                    // Decide from storage, as a single commit does.
                    records.remove(id)
                    let current = try storeResolve(id, reindexing: false)
                    if let current, current.record.sha256 == item.sha256 {
                        outcomes[item.position] = .success((current.record, false))
                        continue
                    }
                    if let first = firstOfID[id] {
                        // The same bytes twice in one batch: stored once, the second found stored.
                        outcomes[item.position] = .success((batch[first].record, false))
                        continue
                    }
                    firstOfID[id] = batch.count
                    let record = StoredImage(
                        id: id, sha256: item.sha256, source: .upload, storedAt: Date(),
                        metadata: ImageMetadata(image: item.image), outputRevision: AnimatedImage.outputRevision,
                        origin: nil, name: nil)
                    batch.append(
                        PendingRecord(record: record, uploadPath: uploads[item.position].path, previous: current?.record))
                    positions.append(item.position)
                } catch {
                    outcomes[item.position] = .failure(error)
                }
            }
            store(batch, positions: positions, into: &outcomes)
        }
        return outcomes.map { $0 ?? .failure(.io("not stored")) }
    }

    /// Stores `batch` (the uploads at `positions`) and writes their outcomes.
    private func store(_ batch: [PendingRecord], positions: [Int], into outcomes: inout [BatchOutcome?]) {
        guard !batch.isEmpty else { return }
        do throws(StorageFailure) {
            let versions = try backend.storeAll(batch)
            let now = clock.seconds()
            for (item, version) in zip(batch, versions) {
                _ = try? remember(
                    item.record.id, FetchedRecord(record: item.record, version: version), at: now, reindexing: false)
            }
            for (item, position) in zip(batch, positions) {
                outcomes[position] = .success((item.record, item.previous == nil))
            }
            logger.info("images stored", metadata: ["count": "\(batch.count)"])
        } catch {
            for position in positions { outcomes[position] = .failure(Self.storeError(error)) }
        }
    }
}
