/// What an image is, in one value: its format, canvas, frame count, timing and every frame's
/// entry, as the indexer and the timeline found them. The model only: how it is written as JSON
/// (the API's field names) belongs to the store (`RecordMetadata` in ImageStorage).
public struct ImageMetadata: Sendable, Equatable {
    public var format: String
    public var mimeType: String
    public var width: Int
    public var height: Int
    public var frameCount: Int
    /// More than one frame.
    public var animated: Bool
    /// Plays in all; 0 = forever.
    public var playCount: Int
    public var repetitionCount: RepetitionCount
    /// One play, on the effective-delay timeline.
    public var durationMs: Int
    public var delayGcdMs: Int
    /// The GIF or APNG ends early or is damaged; the complete frames before the damage count.
    public var truncated: Bool
    public var fileBytes: Int
    public var frames: [Frame]

    /// One frame's entry in the metadata.
    public struct Frame: Sendable, Equatable {
        public var index: Int
        /// The effective delay, as browsers play it.
        public var delayMs: Int
        /// The delay stored in the file.
        public var rawDelayMs: Int
        /// The frame's start on the effective-delay timeline.
        public var timestampMs: Int
        public var rect: PixelRect
        public var dispose: FrameDisposal
        public var blend: FrameBlend
        /// Can be composited without any earlier frame.
        public var independent: Bool

        public init(
            index: Int, delayMs: Int, rawDelayMs: Int, timestampMs: Int, rect: PixelRect,
            dispose: FrameDisposal, blend: FrameBlend, independent: Bool
        ) {
            self.index = index
            self.delayMs = delayMs
            self.rawDelayMs = rawDelayMs
            self.timestampMs = timestampMs
            self.rect = rect
            self.dispose = dispose
            self.blend = blend
            self.independent = independent
        }
    }

    /// The metadata of `image`.
    public init(image: AnimatedImage) {
        let timeline = image.timeline
        self.init(
            format: image.format.rawValue, mimeType: image.format.mimeType, width: image.canvasWidth,
            height: image.canvasHeight, frameCount: image.frameCount, animated: image.frameCount > 1,
            playCount: timeline.playCount, repetitionCount: timeline.repetitionCount,
            durationMs: timeline.durationMs, delayGcdMs: timeline.delayGcdMs,
            truncated: image.index.truncated, fileBytes: image.bytes.count,
            frames: image.index.frames.enumerated().map { i, frame in
                Frame(
                    index: i, delayMs: timeline.delaysMs[i], rawDelayMs: timeline.rawDelaysMs[i],
                    timestampMs: timeline.timestampsMs[i], rect: frame.rect, dispose: frame.disposal,
                    blend: frame.blend, independent: image.dependencies.independent[i])
            })
    }

    /// Metadata from its parts (a stored record read back).
    public init(
        format: String, mimeType: String, width: Int, height: Int, frameCount: Int, animated: Bool,
        playCount: Int, repetitionCount: RepetitionCount, durationMs: Int, delayGcdMs: Int,
        truncated: Bool, fileBytes: Int, frames: [Frame]
    ) {
        self.format = format
        self.mimeType = mimeType
        self.width = width
        self.height = height
        self.frameCount = frameCount
        self.animated = animated
        self.playCount = playCount
        self.repetitionCount = repetitionCount
        self.durationMs = durationMs
        self.delayGcdMs = delayGcdMs
        self.truncated = truncated
        self.fileBytes = fileBytes
        self.frames = frames
    }
}
