/// The metadata document of an image, as `flipbook info` prints it and `GET /images/{id}`
/// serves it. Field names are the API's contract.
public struct ImageMetadata: Sendable, Codable, Equatable {
    /// The image's id; absent from `flipbook info`.
    public var id: String?
    public var format: String
    public var mimeType: String
    public var width: Int
    public var height: Int
    public var frameCount: Int
    public var animated: Bool
    public var playCount: Int
    public var repetitionCount: RepetitionCount
    public var durationMs: Int
    public var delayGcdMs: Int
    public var truncated: Bool
    public var fileBytes: Int
    public var frames: [Frame]

    /// One frame's entry in the metadata.
    public struct Frame: Sendable, Codable, Equatable {
        public var index: Int
        public var delayMs: Int
        public var rawDelayMs: Int
        public var timestampMs: Int
        public var rect: PixelRect
        public var dispose: FrameDisposal
        public var blend: FrameBlend
        public var independent: Bool
    }

    public init(image: AnimatedImage, id: String? = nil) {
        let timeline = image.timeline
        self.id = id
        self.format = image.format.rawValue
        self.mimeType = image.format.mimeType
        self.width = image.canvasWidth
        self.height = image.canvasHeight
        self.frameCount = image.frameCount
        self.animated = image.frameCount > 1
        self.playCount = timeline.playCount
        self.repetitionCount = timeline.repetitionCount
        self.durationMs = timeline.durationMs
        self.delayGcdMs = timeline.delayGcdMs
        self.truncated = image.index.truncated
        self.fileBytes = image.bytes.count
        self.frames = image.index.frames.enumerated().map { i, frame in
            Frame(index: i, delayMs: timeline.delaysMs[i], rawDelayMs: timeline.rawDelaysMs[i],
                  timestampMs: timeline.timestampsMs[i], rect: frame.rect, dispose: frame.disposal,
                  blend: frame.blend, independent: image.dependencies.independent[i])
        }
    }

    private enum CodingKeys: String, CodingKey {
        case id, format, mimeType, width, height, frameCount, animated, playCount, repetitionCount
        case durationMs, delayGcdMs, truncated, fileBytes, frames
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(id, forKey: .id)
        try c.encode(format, forKey: .format)
        try c.encode(mimeType, forKey: .mimeType)
        try c.encode(width, forKey: .width)
        try c.encode(height, forKey: .height)
        try c.encode(frameCount, forKey: .frameCount)
        try c.encode(animated, forKey: .animated)
        try c.encode(playCount, forKey: .playCount)
        try c.encode(repetitionCount, forKey: .repetitionCount)
        try c.encode(durationMs, forKey: .durationMs)
        try c.encode(delayGcdMs, forKey: .delayGcdMs)
        try c.encode(truncated, forKey: .truncated)
        try c.encode(fileBytes, forKey: .fileBytes)
        try c.encode(frames, forKey: .frames)
    }
}
