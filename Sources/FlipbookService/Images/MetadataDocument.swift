import AnimatedImage

/// An image's metadata document as JSON: what `GET /images/{id}` serves and a stored record
/// holds (with `id`), and what `flipbook info` prints (without). The field names are the API's
/// contract (`ImageMetadata` in openapi.yaml); ``ImageMetadata`` is the model they are written
/// from, and what they are read back into.
public struct MetadataDocument: Sendable, Equatable, Codable {
    /// The image's id; absent from `flipbook info`.
    public var id: String?
    public var metadata: ImageMetadata

    public init(id: String?, metadata: ImageMetadata) {
        self.id = id
        self.metadata = metadata
    }

    /// The field names of the metadata document and of an image list's entries.
    enum Field: String, CodingKey {
        case id, format, mimeType, width, height, frameCount, animated, playCount, repetitionCount
        case durationMs, delayGcdMs, truncated, fileBytes, frames, source, sha256
    }

    private enum FrameField: String, CodingKey {
        case index, delayMs, rawDelayMs, timestampMs, rect, dispose, blend, independent
    }

    private enum RectField: String, CodingKey {
        case x, y, width, height
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Field.self)
        try c.encodeIfPresent(id, forKey: .id)
        try Self.encodeHeadline(of: metadata, into: &c)
        try c.encode(RepetitionCountJSON(metadata.repetitionCount), forKey: .repetitionCount)
        try c.encode(metadata.delayGcdMs, forKey: .delayGcdMs)
        try c.encode(metadata.truncated, forKey: .truncated)
        var list = c.nestedUnkeyedContainer(forKey: .frames)
        for frame in metadata.frames {
            var f = list.nestedContainer(keyedBy: FrameField.self)
            try f.encode(frame.index, forKey: .index)
            try f.encode(frame.delayMs, forKey: .delayMs)
            try f.encode(frame.rawDelayMs, forKey: .rawDelayMs)
            try f.encode(frame.timestampMs, forKey: .timestampMs)
            var rect = f.nestedContainer(keyedBy: RectField.self, forKey: .rect)
            try rect.encode(frame.rect.x, forKey: .x)
            try rect.encode(frame.rect.y, forKey: .y)
            try rect.encode(frame.rect.width, forKey: .width)
            try rect.encode(frame.rect.height, forKey: .height)
            try f.encode(frame.dispose.rawValue, forKey: .dispose)
            try f.encode(frame.blend.rawValue, forKey: .blend)
            try f.encode(frame.independent, forKey: .independent)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Field.self)
        id = try c.decodeIfPresent(String.self, forKey: .id)
        var list = try c.nestedUnkeyedContainer(forKey: .frames)
        var frames: [ImageMetadata.Frame] = []
        while !list.isAtEnd {
            let f = try list.nestedContainer(keyedBy: FrameField.self)
            let rect = try f.nestedContainer(keyedBy: RectField.self, forKey: .rect)
            frames.append(
                try ImageMetadata.Frame(
                    index: f.decode(Int.self, forKey: .index), delayMs: f.decode(Int.self, forKey: .delayMs),
                    rawDelayMs: f.decode(Int.self, forKey: .rawDelayMs),
                    timestampMs: f.decode(Int.self, forKey: .timestampMs),
                    rect: PixelRect(
                        x: rect.decode(Int.self, forKey: .x), y: rect.decode(Int.self, forKey: .y),
                        width: rect.decode(Int.self, forKey: .width),
                        height: rect.decode(Int.self, forKey: .height)),
                    dispose: Self.decodeRawValue(FrameDisposal.self, forKey: .dispose, in: f),
                    blend: Self.decodeRawValue(FrameBlend.self, forKey: .blend, in: f),
                    independent: f.decode(Bool.self, forKey: .independent)))
        }
        metadata = try ImageMetadata(
            format: c.decode(String.self, forKey: .format), mimeType: c.decode(String.self, forKey: .mimeType),
            width: c.decode(Int.self, forKey: .width), height: c.decode(Int.self, forKey: .height),
            frameCount: c.decode(Int.self, forKey: .frameCount), animated: c.decode(Bool.self, forKey: .animated),
            playCount: c.decode(Int.self, forKey: .playCount),
            repetitionCount: c.decode(RepetitionCountJSON.self, forKey: .repetitionCount).value,
            durationMs: c.decode(Int.self, forKey: .durationMs), delayGcdMs: c.decode(Int.self, forKey: .delayGcdMs),
            truncated: c.decode(Bool.self, forKey: .truncated), fileBytes: c.decode(Int.self, forKey: .fileBytes),
            frames: frames)
    }

    /// The fields an image list's entry shares with the metadata document.
    static func encodeHeadline(of metadata: ImageMetadata, into c: inout KeyedEncodingContainer<Field>) throws {
        try c.encode(metadata.format, forKey: .format)
        try c.encode(metadata.mimeType, forKey: .mimeType)
        try c.encode(metadata.width, forKey: .width)
        try c.encode(metadata.height, forKey: .height)
        try c.encode(metadata.frameCount, forKey: .frameCount)
        try c.encode(metadata.animated, forKey: .animated)
        try c.encode(metadata.playCount, forKey: .playCount)
        try c.encode(metadata.durationMs, forKey: .durationMs)
        try c.encode(metadata.fileBytes, forKey: .fileBytes)
    }

    private static func decodeRawValue<Value: RawRepresentable>(
        _ type: Value.Type, forKey key: FrameField, in c: KeyedDecodingContainer<FrameField>
    ) throws -> Value where Value.RawValue == String {
        let text = try c.decode(String.self, forKey: key)
        guard let value = Value(rawValue: text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "unknown \(key.stringValue) '\(text)'")
        }
        return value
    }
}

/// One entry of `GET /images` (`ImageSummary` in openapi.yaml): a record's id, source and
/// content hash with its metadata's headline fields.
struct ImageSummaryDocument: Encodable {
    var record: StoredImage

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: MetadataDocument.Field.self)
        try c.encode(record.id, forKey: .id)
        try MetadataDocument.encodeHeadline(of: record.metadata, into: &c)
        try c.encode(record.source.rawValue, forKey: .source)
        try c.encode(record.sha256, forKey: .sha256)
        try NamedDocument<MetadataDocument>.encodeName(record.name, to: encoder)
    }
}

/// `repetitionCount` as JSON (`RepetitionCount` in openapi.yaml): `"infinite"`, or how many
/// times the animation repeats after its first play.
struct RepetitionCountJSON: Codable, Equatable {
    var value: RepetitionCount

    init(_ value: RepetitionCount) { self.value = value }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch value {
        case .infinite: try c.encode("infinite")
        case .count(let n): try c.encode(n)
        }
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let n = try? c.decode(Int.self) {
            value = .count(n)
        } else if try c.decode(String.self) == "infinite" {
            value = .infinite
        } else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "repetitionCount is a number or \"infinite\"")
        }
    }
}
