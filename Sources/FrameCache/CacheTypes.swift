import AnimatedImage

/// What the cache needs to know of an image before loading it: its id, its frame count and
/// canvas size (from stored metadata), and how to load it when a frame must be decoded.
public struct CacheableImage: Sendable {
    public var id: String
    public var frameCount: Int
    public var canvasWidth: Int
    public var canvasHeight: Int
    /// Reads and indexes the image; called on a decode thread, never on the caller's.
    public var load: @Sendable () throws -> AnimatedImage

    public init(id: String, frameCount: Int, canvasWidth: Int, canvasHeight: Int,
                load: @escaping @Sendable () throws -> AnimatedImage) {
        self.id = id
        self.frameCount = frameCount
        self.canvasWidth = canvasWidth
        self.canvasHeight = canvasHeight
        self.load = load
    }

    /// An image already in memory.
    public init(id: String, image: AnimatedImage) {
        self.init(id: id, frameCount: image.frameCount, canvasWidth: image.canvasWidth,
                  canvasHeight: image.canvasHeight, load: { image })
    }
}

/// A composited frame as PNG bytes.
public struct EncodedFrame: Sendable {
    public let index: Int
    public let png: [UInt8]

    public init(index: Int, png: [UInt8]) {
        self.index = index
        self.png = png
    }
}

/// Why the cache could not produce a frame.
public enum FrameCacheError: Error, Sendable, Equatable {
    /// Too many requests are already waiting for decodes.
    case queueFull(retryAfterSeconds: Int)
    case frameOutOfRange(index: Int, frameCount: Int)
    /// The image could not be read or indexed.
    case loadFailed(String)
    /// The frame's data did not decode.
    case decodeFailed(String)
    /// The image was removed while the request waited.
    case removed
    case shuttingDown
}

/// Which frames of one image the cache holds at a moment, with the window decoded ahead of its
/// playhead: what a player page shows as its "in the server's cache" strip.
public struct ImageResidency: Sendable, Equatable {
    public var frameCount: Int
    /// Indices of the frames held as PNG, ascending.
    public var cachedFrames: [Int]
    /// How many frames from the playhead on are kept decoded ahead.
    public var window: Int
    /// The window holds the whole animation.
    public var whole: Bool
    /// The frame most recently asked for.
    public var playhead: Int
}
