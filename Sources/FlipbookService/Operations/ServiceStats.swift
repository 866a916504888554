import FrameCache
import ImageStorage

/// The document of `GET /stats` (and of a memory-pressure request): the frame cache's state, its
/// fields at the top level, plus `files` — what the store holds of image files (mapped page
/// cache and heap copies), which the cache's byte budget does not include —, `records` (the
/// store's record cache, outside that budget too) and `accessLog`.
struct ServiceStats: Encodable {
    var cache: CacheStats
    var files: FileStats
    var records: RecordCacheStats
    var accessLog: AccessLogStats
    var derived: DerivedStats

    private enum Keys: String, CodingKey {
        case files, records, accessLog, derived
    }

    func encode(to encoder: any Encoder) throws {
        try cache.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(files, forKey: .files)
        try container.encode(records, forKey: .records)
        try container.encode(accessLog, forKey: .accessLog)
        try container.encode(derived, forKey: .derived)
    }
}

/// The access log's part of `/stats`: where lines go, how many were written, and how many were
/// dropped because the writer fell behind (a loop never waits for it).
struct AccessLogStats: Encodable {
    var enabled: Bool
    /// `stderr` or the file's path.
    var destination: String?
    var linesWritten: Int
    var linesDropped: Int

    init(_ log: AccessLog?) {
        enabled = log != nil
        switch log?.destination {
        case .standardError: destination = "stderr"
        case .file(let path): destination = path
        case nil: destination = nil
        }
        let counts = log?.counts ?? AccessLog.Counts()
        linesWritten = counts.linesWritten
        linesDropped = counts.linesDropped
    }
}
