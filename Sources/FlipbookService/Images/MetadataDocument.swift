import AnimatedImage
import ImageStorage

/// An image's metadata document as JSON: what `GET /images/{id}` serves (with `id`) and what
/// `flipbook info` prints (without). The field names are the API's contract (`ImageMetadata` in
/// openapi.yaml); the object is the one a stored record holds (``RecordMetadata``), which is what
/// it is written and read as.
public struct MetadataDocument: Sendable, Equatable, Codable {
    /// The image's id; absent from `flipbook info`.
    public var id: String?
    public var metadata: ImageMetadata

    public init(id: String?, metadata: ImageMetadata) {
        self.id = id
        self.metadata = metadata
    }

    public func encode(to encoder: any Encoder) throws {
        try RecordMetadata(id: id, metadata: metadata).encode(to: encoder)
    }

    public init(from decoder: any Decoder) throws {
        let record = try RecordMetadata(from: decoder)
        self.init(id: record.id, metadata: record.metadata)
    }
}

/// One entry of `GET /images` (`ImageSummary` in openapi.yaml): a record's id, source and
/// content hash with its metadata's headline fields.
struct ImageSummaryDocument: Encodable {
    var summary: ImageSummary

    init(summary: ImageSummary) { self.summary = summary }

    init(record: StoredImage) { summary = ImageSummary(record) }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: RecordMetadata.Field.self)
        try c.encode(summary.id, forKey: .id)
        try RecordMetadata.encodeHeadline(of: summary.headline, into: &c)
        try c.encode(summary.source.rawValue, forKey: .source)
        try c.encode(summary.sha256, forKey: .sha256)
        try c.encodeIfPresent(summary.name, forKey: .name)
    }
}
