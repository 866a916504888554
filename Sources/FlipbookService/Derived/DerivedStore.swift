import FoundationEssentials
import Glibc
import ImageStorage
import Synchronization

/// Where storyboards and previews are kept: `<dataDir>/derived/<sha256>/<product>`, a file (a
/// preview, `preview-<rendition>-r<revision>.webp`) or a directory of files (a storyboard's
/// sheets, `storyboard-<spec>-r<revision>/0.webp`, `1.webp`, …), under the SHA-256 of the
/// original they are made from, so deleting an image deletes its products with one directory.
///
/// A product appears whole or not at all: it is written under `derived/tmp/` and renamed into
/// place. What is on disk is found again after a restart, and a product another replica sharing
/// the data directory made is found on lookup. Products are kept within ``maxBytes``, the least
/// recently used removed first (each replica counts what it has seen).
final class DerivedStore: Sendable {
    /// The products kept (by path) and how many were removed to stay within ``maxBytes``.
    private struct Index {
        var products = KeptFiles<String>()
        var evictions = 0
    }

    let root: String
    let temporaryDirectory: String
    let maxBytes: Int
    private let index = Mutex(Index())

    /// Opens (creating) `<dataDirectory>/derived`; a directory that cannot be made shows later,
    /// as builds that fail to store.
    init(dataDirectory: String, maxBytes: Int) {
        root = dataDirectory + "/derived"
        temporaryDirectory = root + "/tmp"
        self.maxBytes = maxBytes
        try? FileManager.default.createDirectory(atPath: temporaryDirectory, withIntermediateDirectories: true)
        Self.removeLeftovers(in: temporaryDirectory)
        scan()
    }

    /// The path of product `name` of content `sha256`.
    func path(_ sha256: String, _ name: String) -> String { root + "/" + sha256 + "/" + name }

    /// Whether the product exists (on disk: also one another replica made); marks it used.
    func contains(_ sha256: String, _ name: String) -> Bool {
        let path = path(sha256, name)
        var status = stat()
        guard stat(path, &status) == 0 else {
            _ = index.withLock { $0.products.remove(path) }
            return false
        }
        if !index.withLock({ $0.products.use(path) }) {
            let bytes = Self.size(path)
            index.withLock { $0.products.insert(path, bytes: bytes) }
        }
        return true
    }

    /// A new empty directory under `derived/tmp/` to write a product into.
    func makeStaging() throws -> String {
        let path = temporaryDirectory + "/" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    /// Moves `staged` (a file or a directory under `derived/tmp/`) into place as product `name`
    /// of `sha256`, then removes the least recently used products beyond ``maxBytes``. When the
    /// product already exists (another build, another replica), `staged` is dropped.
    func commit(_ staged: String, _ sha256: String, _ name: String) throws {
        let target = path(sha256, name)
        try FileManager.default.createDirectory(atPath: root + "/" + sha256, withIntermediateDirectories: true)
        if rename(staged, target) != 0 {
            let error = errno
            try? FileManager.default.removeItem(atPath: staged)
            guard error == EEXIST || error == ENOTEMPTY else {
                throw DerivedFailure.io("cannot move \(staged) to \(target): \(String(cString: strerror(error)))")
            }
        }
        let bytes = Self.size(target)
        index.withLock { $0.products.insert(target, bytes: bytes) }
        evict(keeping: target)
    }

    /// Removes every product of `sha256` (its image was deleted).
    func removeAll(of sha256: String) {
        let directory = root + "/" + sha256 + "/"
        index.withLock { index in
            for path in index.products.keys(where: { $0.hasPrefix(directory) }) { index.products.remove(path) }
        }
        try? FileManager.default.removeItem(atPath: root + "/" + sha256)
    }

    /// Bytes kept, products kept, and products removed to stay within ``maxBytes``.
    func usage() -> (bytes: Int, products: Int, evictions: Int) {
        index.withLock { ($0.products.totalBytes, $0.products.count, $0.evictions) }
    }

    private func evict(keeping kept: String) {
        let victims = index.withLock { index in
            let victims = index.products.evict(toFit: maxBytes, keeping: kept)
            index.evictions += victims.count
            return victims
        }
        for victim in victims { try? FileManager.default.removeItem(atPath: victim) }
    }

    /// Products a crash left half-written: staging directories untouched for an hour (a replica
    /// sharing the data directory may be writing the newer ones now).
    private static func removeLeftovers(in directory: String, olderThan seconds: Double = 3600) {
        let now = Date().timeIntervalSince1970
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            let path = directory + "/" + name
            var status = stat()
            guard stat(path, &status) == 0, now - Double(status.st_mtim.tv_sec) > seconds else { continue }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Indexes what is on disk, the most recently modified as the most recently used.
    private func scan() {
        let manager = FileManager.default
        var found: [(path: String, modified: Double, bytes: Int)] = []
        for content in (try? manager.contentsOfDirectory(atPath: root)) ?? [] where content != "tmp" {
            let directory = root + "/" + content
            for name in (try? manager.contentsOfDirectory(atPath: directory)) ?? [] {
                let path = directory + "/" + name
                var status = stat()
                guard stat(path, &status) == 0 else { continue }
                let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
                found.append((path, modified, Self.size(path)))
            }
        }
        index.withLock { index in
            for product in found.sorted(by: { $0.modified < $1.modified }) {
                index.products.insert(product.path, bytes: product.bytes)
            }
        }
    }

    /// The bytes of a file, or of every file in a directory.
    static func size(_ path: String) -> Int {
        var status = stat()
        guard stat(path, &status) == 0 else { return 0 }
        if (status.st_mode & S_IFMT) != S_IFDIR { return Int(status.st_size) }
        var total = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            total += size(path + "/" + name)
        }
        return total
    }
}
