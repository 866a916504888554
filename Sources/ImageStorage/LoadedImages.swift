import AnimatedImage
import Synchronization

/// What the store holds of image files, for `GET /stats`: the images it keeps indexed, and every
/// file it has handed out that is still alive anywhere (in its own LRU or in a frame-cache
/// decoder).
public struct FileStats: Sendable, Codable, Equatable {
    /// Images kept indexed (mapping + index) by the store, most recently used first.
    public var loaded: Int
    /// The most images the store keeps indexed (``ImageStore/defaultMaxLoadedImages``).
    public var loadedLimit: Int
    /// Live file mappings: page cache, shared and reclaimable, not the process's heap.
    public var mapped: Int
    public var mappedBytes: Int
    /// Library files read onto the heap and still held (anonymous memory).
    public var heapCopies: Int
    public var heapBytes: Int
}

/// The store's images ready to render, keyed by id: a count-bounded LRU of
/// ``AnimatedImage`` values (a file's bytes and its index), so the frame cache can recreate a
/// decoder without the file being read or indexed again. Also opens files, counting the memory
/// each one holds until its last copy is released.
final class LoadedImages: Sendable {
    private struct Entry {
        /// The content the image was made from: an entry is only used for a record of the same
        /// content, so a replaced named image is never served from the old file.
        var sha256: String
        var image: AnimatedImage
    }

    /// Counts of the files handed out that are still alive; a class, so that the release
    /// actions of the bytes (which may outlive the store) can hold it.
    private final class Live: Sendable {
        struct Counts {
            var mapped = 0
            var mappedBytes = 0
            var heapCopies = 0
            var heapBytes = 0
        }

        let counts = Mutex(Counts())

        func add(mapped: Int = 0, mappedBytes: Int = 0, heapCopies: Int = 0, heapBytes: Int = 0) {
            counts.withLock {
                $0.mapped += mapped
                $0.mappedBytes += mappedBytes
                $0.heapCopies += heapCopies
                $0.heapBytes += heapBytes
            }
        }
    }

    let limit: Int
    private let entries: Mutex<LRUCache<String, Entry>>
    private let live = Live()

    init(limit: Int) {
        self.limit = limit
        entries = Mutex(LRUCache(capacity: max(1, limit)))
    }

    /// The image kept for `id`, when it was made from the content `sha256`.
    func image(_ id: String, sha256: String) -> AnimatedImage? {
        entries.withLock { lru in
            guard let entry = lru.value(for: id), entry.sha256 == sha256 else { return nil }
            return entry.image
        }
    }

    /// Keeps `image` (made from content `sha256`) for `id`; the least recently used image goes
    /// when the store is full (its memory is released once no decoder holds it either).
    func keep(_ image: AnimatedImage, id: String, sha256: String) {
        let evicted = entries.withLock { $0.insert(Entry(sha256: sha256, image: image), for: id) }
        _ = evicted  // released here, outside the lock (munmap may take a moment)
    }

    /// Forgets `id` (deleted or replaced).
    func forget(_ id: String) {
        let removed = entries.withLock { $0.removeValue(for: id) }
        _ = removed
    }

    /// Forgets `id` unless it was made from content `sha256` (its record changed on disk).
    func forget(_ id: String, unless sha256: String) {
        let removed = entries.withLock { lru -> Entry? in
            guard let entry = lru.peek(id), entry.sha256 != sha256 else { return nil }
            return lru.removeValue(for: id)
        }
        _ = removed
    }

    var count: Int { entries.withLock { $0.count } }

    var stats: FileStats {
        let loaded = count
        return live.counts.withLock { live in
            FileStats(
                loaded: loaded, loadedLimit: limit, mapped: live.mapped, mappedBytes: live.mappedBytes,
                heapCopies: live.heapCopies, heapBytes: live.heapBytes)
        }
    }

    // MARK: Opening files

    /// Maps `path` read-only; counted until the last copy of the bytes is released.
    func map(_ path: String) throws -> ImageBytes {
        let live = self.live
        let file = try MappedFile(path: path) { size in
            live.add(mapped: -1, mappedBytes: -size)
        }
        live.add(mapped: 1, mappedBytes: file.bytes.count)
        return file.bytes
    }

    /// Reads all of `path` onto the heap; counted until the last copy is released.
    func read(_ path: String) throws -> ImageBytes {
        let live = self.live
        return try DurableFiles.withOpenFile(path) { fd, size in
            let bytes = try ImageBytes(
                unsafeUninitializedCount: size,
                onRelease: {
                    live.add(heapCopies: -1, heapBytes: -size)
                }
            ) { buffer in
                guard try DurableFiles.readFully(fd, into: UnsafeMutableRawBufferPointer(buffer), path: path) == size else {
                    throw DurableFiles.IOFailure(description: "\(path) shrank while it was read")
                }
            }
            live.add(heapCopies: 1, heapBytes: size)
            return bytes
        }
    }
}
