import Crypto
import FoundationEssentials
import Glibc
import Metrics
import Synchronization
import SystemResources

/// The local disk cache of originals of `storage.backend = s3`: one file per original, named by
/// its SHA-256, in `<dataDir>/originals/`; the least recently used files are removed once the
/// total passes `capacity` bytes (the most recent one always stays, whatever its size). A file
/// enters complete and verified — downloaded or moved into `<dataDir>/tmp/`, hashed, `fsync`ed,
/// then renamed into place — and is never rewritten, so it may be memory-mapped; removing it
/// leaves existing mappings valid. Concurrent requests for an original that is not local share
/// one download. Survives restarts (the directory is scanned at start-up).
final class OriginalsCache: Sendable {
    let directory: String
    let temporaryDirectory: String
    let capacity: Int

    private struct State {
        /// The originals cached, by SHA-256.
        var files = KeptFiles<String>()
        /// Downloads under way, by SHA-256; waiters share the outcome.
        var filling: [String: Once<Result<String, StorageFailure>>] = [:]
    }

    private let state = Mutex(State())
    private let bytesGauge: Gauge
    private let filesGauge: Gauge
    private let fills: Counter
    private let evictions: Counter

    init(
        directory: String, temporaryDirectory: String, capacity: Int,
        metricsFactory: any MetricsFactory
    ) throws(StorageFailure) {
        self.directory = directory
        self.temporaryDirectory = temporaryDirectory
        self.capacity = capacity
        bytesGauge = Gauge(label: "flipbook_s3_local_cache_bytes", factory: metricsFactory)
        filesGauge = Gauge(label: "flipbook_s3_local_cache_files", factory: metricsFactory)
        fills = Counter(label: "flipbook_s3_local_cache_fills_total", factory: metricsFactory)
        evictions = Counter(label: "flipbook_s3_local_cache_evictions_total", factory: metricsFactory)
        try DurableFiles.makeDirectories([directory, temporaryDirectory])
        // What an earlier run left, oldest first by modification time.
        var found: [(sha: String, size: Int, modified: Double)] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            let path = directory + "/" + name
            guard ImageID.isContentID(name), let stamp = FileStamp(path: path), stamp.size > 0 else {
                unlink(path)
                continue
            }
            found.append((name, stamp.size, stamp.modified))
        }
        state.withLock { state in
            for file in found.sorted(by: { $0.modified < $1.modified }) { state.files.insert(file.sha, bytes: file.size) }
        }
        evictIfNeeded()
    }

    func path(_ sha256: String) -> String { directory + "/" + sha256 }

    /// The local file of `sha256`, marked used; nil when it is not cached.
    func lookup(_ sha256: String) -> String? {
        state.withLock { $0.files.use(sha256) } ? path(sha256) : nil
    }

    func contains(_ sha256: String) -> Bool {
        state.withLock { $0.files.contains(sha256) }
    }

    /// Moves a verified file (an upload whose SHA-256 is `sha256`, on the same file system)
    /// into the cache.
    func adopt(_ sha256: String, from file: String) {
        guard !contains(sha256) else {
            unlink(file)
            return
        }
        guard let stamp = FileStamp(path: file), rename(file, path(sha256)) == 0 else {
            unlink(file)
            return
        }
        insert(sha256, size: stamp.size)
    }

    /// The local file of `sha256`, downloaded by `fetch` (which writes the given path) when it is
    /// not cached; the download is verified against `sha256`. One download per original at a
    /// time: other callers wait for it.
    func fill(_ sha256: String, fetch: (String) throws(StorageFailure) -> Void) throws(StorageFailure) -> String {
        if let path = lookup(sha256) { return path }
        let (once, isFiller) = state.withLock { state -> (Once<Result<String, StorageFailure>>, Bool) in
            if let once = state.filling[sha256] { return (once, false) }
            let once = Once<Result<String, StorageFailure>>()
            state.filling[sha256] = once
            return (once, true)
        }
        guard isFiller else { return try once.wait().get() }
        let result: Result<String, StorageFailure>
        do {
            result = .success(try download(sha256, fetch: fetch))
        } catch {
            result = .failure(error)
        }
        state.withLock { _ = $0.filling.removeValue(forKey: sha256) }
        once.set(result)
        return try result.get()
    }

    private func download(_ sha256: String, fetch: (String) throws(StorageFailure) -> Void) throws(StorageFailure) -> String {
        let temporary = temporaryDirectory + "/.original-" + UUID().uuidString
        defer { unlink(temporary) }
        try fetch(temporary)
        let (digest, size) = try Self.hashAndSync(temporary)
        guard digest == sha256 else {
            throw .failed("the original \(sha256) came back with SHA-256 \(digest) (\(size) bytes): not cached")
        }
        guard rename(temporary, path(sha256)) == 0 else {
            throw .failed("cannot move the original \(sha256) into \(directory): \(String(cString: strerror(errno)))")
        }
        fills.increment()
        insert(sha256, size: size)
        return path(sha256)
    }

    /// Drops `sha256` (a deleted image).
    func remove(_ sha256: String) {
        if state.withLock({ $0.files.remove(sha256) }) { unlink(path(sha256)) }
        publish()
    }

    var usage: (files: Int, bytes: Int) {
        state.withLock { ($0.files.count, $0.files.totalBytes) }
    }

    private func insert(_ sha256: String, size: Int) {
        state.withLock { $0.files.insert(sha256, bytes: size) }
        evictIfNeeded(keeping: sha256)
    }

    /// Least recently used first, until the total fits (`kept`, the file just added, or else the
    /// newest, always stays).
    private func evictIfNeeded(keeping kept: String? = nil) {
        let victims = state.withLock { $0.files.evict(toFit: capacity, keeping: kept) }
        for sha in victims {
            unlink(path(sha))
            evictions.increment()
        }
        publish()
    }

    private func publish() {
        let (files, bytes) = usage
        bytesGauge.record(bytes)
        filesGauge.record(files)
    }

    /// SHA-256 and size of a file, flushed to disk.
    static func hashAndSync(_ path: String) throws(StorageFailure) -> (String, Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .failed("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var hasher = SHA256()
        var size = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .failed("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            size += n
        }
        guard fsync(fd) == 0 else { throw .failed("cannot fsync \(path): \(String(cString: strerror(errno)))") }
        return (ContentHash.hex(hasher.finalize()), size)
    }
}
