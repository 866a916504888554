import FrameCache

/// The document of `GET /stats` (and of a memory-pressure request): the frame cache's state, its
/// fields at the top level, plus `files` — what the store holds of image files (mapped page
/// cache and heap copies), which the cache's byte budget does not include.
struct ServiceStats: Encodable {
    var cache: CacheStats
    var files: FileStats

    private enum Keys: String, CodingKey {
        case files
    }

    func encode(to encoder: any Encoder) throws {
        try cache.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(files, forKey: .files)
    }
}
