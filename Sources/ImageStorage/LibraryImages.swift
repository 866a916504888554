import AnimatedImage
import FoundationEssentials
import Glibc
import Logging

/// The read-only library directories' images, registered by file name at start-up: indexed
/// once, never changed, never deleted through the API.
struct LibraryImages: Sendable {
    private let images: [String: (path: String, cached: ImageStore.Cached)]
    /// Their ids in byte order, for listing.
    private let sortedIDs: [String]

    /// Files that are not images, have a name that is not a valid id, or break a limit are
    /// skipped with a warning.
    init(directories: [String], limits: DecodeLimits, logger: Logger) {
        var images: [String: (path: String, cached: ImageStore.Cached)] = [:]
        for directory in directories {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
                logger.warning("library directory not readable", metadata: ["dir": "\(directory)"])
                continue
            }
            for name in names.sorted() where !name.hasPrefix(".") {
                let lower = name.lowercased()
                guard [".gif", ".png", ".apng", ".webp"].contains(where: { lower.hasSuffix($0) }) else { continue }
                guard ImageID.validateName(name) == nil else {
                    logger.warning("library file name is not a valid id; skipped", metadata: ["file": "\(name)"])
                    continue
                }
                let path = directory + "/" + name
                do {
                    let bytes = try DurableFiles.read(path)
                    let image = try AnimatedImage(bytes: bytes, limits: limits, verification: .full)
                    let record = StoredImage(
                        id: name, sha256: ContentHash.sha256Hex(bytes), source: .library,
                        storedAt: Date(), metadata: ImageMetadata(image: image),
                        outputRevision: AnimatedImage.outputRevision)
                    images[name] = (
                        path,
                        ImageStore.Cached(
                            record: record,
                            metadataJSON: try ImageStore.encodeMetadata(of: record),
                            version: nil, checkedAt: 0)
                    )
                } catch {
                    logger.warning("library file skipped", metadata: ["file": "\(path)", "error": "\(error)"])
                }
            }
        }
        self.images = images
        sortedIDs = images.keys.sorted()
    }

    var count: Int { images.count }

    /// The library image called `id`. Content ids (64 hex digits) are never library names, so
    /// they are not looked up.
    func cached(_ id: String) -> ImageStore.Cached? {
        guard !images.isEmpty, !ImageID.isContentID(id) else { return nil }
        return images[id]?.cached
    }

    func path(_ id: String) -> String? { images[id]?.path }

    /// The first `limit` library ids after `cursor`, in order (a binary search, then the page).
    func ids(after cursor: String?, limit: Int) -> [String] {
        var low = 0
        if let cursor {
            var high = sortedIDs.count
            while low < high {
                let middle = (low + high) / 2
                if sortedIDs[middle] <= cursor { low = middle + 1 } else { high = middle }
            }
        }
        return Array(sortedIDs[low..<min(sortedIDs.count, low + max(0, limit))])
    }
}
