import FoundationEssentials

/// Where an image registered by URL came from: the URL asked for, the validators of the answer
/// (for `POST /images/{id}/refresh`) and when it was fetched. Kept in the image's record.
public struct SourceOrigin: Sendable, Codable, Equatable {
    /// The URL as registered (redirects are followed again on each refresh).
    public var url: String
    public var etag: String?
    public var lastModified: String?
    public var fetchedAt: Date

    public init(url: String, etag: String?, lastModified: String?, fetchedAt: Date) {
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
        self.fetchedAt = fetchedAt
    }
}
