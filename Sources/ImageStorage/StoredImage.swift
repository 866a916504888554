import AnimatedImage
import FoundationEssentials

/// What the store knows of one image without touching its pixels: where it came from, its
/// content hash and its metadata. Written beside the image as `records/<p>/<id>.json`, the
/// metadata as a ``RecordMetadata`` (with `id`).
public struct StoredImage: Sendable, Codable, Equatable {
    /// How an image entered the store.
    public enum Source: String, Sendable, Codable {
        /// `POST /images`: the id is the SHA-256 of the bytes, so the image never changes.
        case upload
        /// `PUT /images/{name}`: the id is the name; the image may be replaced.
        case named
        /// A file of a read-only library directory, registered by its file name.
        case library
    }

    public var id: String
    /// Lowercase hex SHA-256 of the file's bytes.
    public var sha256: String
    public var source: Source
    public var storedAt: Date
    public var metadata: ImageMetadata
    /// The ``AnimatedImage/outputRevision`` that derived `metadata` (nil in records written
    /// before revisions were recorded). A record of another revision is re-indexed from its
    /// original when it is loaded (``ImageStore``), since frame counts and timing may differ.
    public var outputRevision: Int?
    /// Where the bytes were fetched from, for an image registered by URL (nil otherwise).
    public var origin: SourceOrigin? = nil
    /// The file name the upload carried (`Content-Disposition`), sanitised: for display only.
    public var name: String? = nil

    /// Whether `metadata` is what this build derives from the original.
    public var isCurrentRevision: Bool { outputRevision == AnimatedImage.outputRevision }

    /// Frames and metadata of this image can never change under its id.
    public var isImmutable: Bool { source == .upload }

    private enum CodingKeys: String, CodingKey { case id, sha256, source, storedAt, metadata, outputRevision, origin, name }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(sha256, forKey: .sha256)
        try c.encode(source, forKey: .source)
        try c.encode(storedAt, forKey: .storedAt)
        try c.encode(RecordMetadata(id: id, metadata: metadata), forKey: .metadata)
        try c.encodeIfPresent(outputRevision, forKey: .outputRevision)
        try c.encodeIfPresent(origin, forKey: .origin)
        try c.encodeIfPresent(name, forKey: .name)
    }
}

extension StoredImage {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            id: c.decode(String.self, forKey: .id), sha256: c.decode(String.self, forKey: .sha256),
            source: c.decode(Source.self, forKey: .source), storedAt: c.decode(Date.self, forKey: .storedAt),
            metadata: c.decode(RecordMetadata.self, forKey: .metadata).metadata,
            outputRevision: c.decodeIfPresent(Int.self, forKey: .outputRevision),
            origin: c.decodeIfPresent(SourceOrigin.self, forKey: .origin),
            name: c.decodeIfPresent(String.self, forKey: .name))
    }
}

/// Ids and names the API accepts.
public enum ImageID {
    /// `PUT /images/{name}` names: `[A-Za-z0-9._-]{1,128}`, not only dots, and not 64 hex digits
    /// (those are content ids, which must keep meaning "these exact bytes").
    public static func validateName(_ name: String) -> String? {
        guard (1...128).contains(name.utf8.count) else { return "a name has 1 to 128 characters" }
        guard name.utf8.allSatisfy({ isNameByte($0) }) else {
            return "a name may contain only letters, digits, '.', '_' and '-'"
        }
        guard name.contains(where: { $0 != "." }) else { return "a name cannot consist of dots only" }
        guard !isContentID(name) else { return "names of 64 hexadecimal digits are reserved for content ids" }
        return nil
    }

    /// Whether `id` could name something in the store (any valid name or content id).
    public static func isWellFormed(_ id: String) -> Bool {
        var id = id
        return id.withUTF8 { bytes in  // in place: ids are checked on every request
            isContentID(bytes)
                || ((1...255).contains(bytes.count) && bytes.allSatisfy { isNameByte($0) }
                    && bytes.contains { $0 != 0x2E })
        }
    }

    /// 64 lowercase hexadecimal digits.
    public static func isContentID(_ id: String) -> Bool {
        var id = id
        return id.withUTF8 { isContentID($0) }
    }

    static func isContentID(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == 64 else { return false }
        // No early exit, so that the compiler vectorises the loop: 1 when a byte is not a digit
        // nor `a`–`f`.
        var outside: UInt8 = 0
        for byte in bytes { outside |= (byte &- 0x30 < 10 ? 0 : 1) & (byte &- 0x61 < 6 ? 0 : 1) }
        return outside == 0
    }

    @inline(__always)
    static func isNameByte(_ byte: UInt8) -> Bool {
        byte &- 0x30 < 10 || (byte | 0x20) &- 0x61 < 26 || byte == 0x2e || byte == 0x5f || byte == 0x2d
    }
}

extension StoredImage {
    /// The record as stored: sorted keys, ISO 8601 dates.
    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }

    static func decode(_ bytes: [UInt8]) throws -> StoredImage {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(StoredImage.self, from: Data(bytes))
    }
}
