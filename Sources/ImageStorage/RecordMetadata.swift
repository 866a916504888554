import AnimatedImage

/// An image's ``ImageMetadata`` as JSON, the form the store writes in a record (`metadata`, with
/// the image's `id`) and reads back; the service serves the same object (and, with the display
/// `name`, as `GET /images/{id}`). The field names are those of `ImageMetadata`
/// in openapi.yaml; records written by every earlier build read back unchanged.
package struct RecordMetadata: Sendable, Equatable, Codable {
    /// The image's id; absent from `flipbook info`.
    package var id: String?
    package var metadata: ImageMetadata
    /// The display name (`Content-Disposition` of the upload), when there is one; a record
    /// keeps it beside this object, not in it.
    package var name: String? = nil

    package init(id: String?, metadata: ImageMetadata, name: String? = nil) {
        self.id = id
        self.metadata = metadata
        self.name = name
    }

    /// The field names of the metadata object and of an image list's entries.
    package enum Field: String, CodingKey {
        case id, format, mimeType, width, height, frameCount, animated, playCount, repetitionCount
        case durationMs, delayGcdMs, truncated, fileBytes, frames, source, sha256, name
    }

    private enum FrameField: String, CodingKey {
        case index, delayMs, rawDelayMs, timestampMs, rect, dispose, blend, independent
    }

    private enum RectField: String, CodingKey {
        case x, y, width, height
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Field.self)
        try c.encodeIfPresent(id, forKey: .id)
        try c.encodeIfPresent(name, forKey: .name)
        try Self.encodeHeadline(of: ImageHeadline(metadata), into: &c)
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

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Field.self)
        id = try c.decodeIfPresent(String.self, forKey: .id)
        name = try c.decodeIfPresent(String.self, forKey: .name)
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
    package static func encodeHeadline(of headline: ImageHeadline, into c: inout KeyedEncodingContainer<Field>) throws {
        try c.encode(headline.format, forKey: .format)
        try c.encode(headline.mimeType, forKey: .mimeType)
        try c.encode(headline.width, forKey: .width)
        try c.encode(headline.height, forKey: .height)
        try c.encode(headline.frameCount, forKey: .frameCount)
        try c.encode(headline.animated, forKey: .animated)
        try c.encode(headline.playCount, forKey: .playCount)
        try c.encode(headline.durationMs, forKey: .durationMs)
        try c.encode(headline.fileBytes, forKey: .fileBytes)
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

/// `repetitionCount` as JSON (`RepetitionCount` in openapi.yaml): `"infinite"`, or how many
/// times the animation repeats after its first play.
package struct RepetitionCountJSON: Codable, Equatable {
    package var value: RepetitionCount

    package init(_ value: RepetitionCount) { self.value = value }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch value {
        case .infinite: try c.encode("infinite")
        case .count(let n): try c.encode(n)
        }
    }

    package init(from decoder: any Decoder) throws {
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
