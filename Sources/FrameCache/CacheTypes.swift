import AnimatedImage

/// What the cache needs to know of an image before loading it: its id, its frame count and
/// canvas size (from stored metadata), how to load it when a frame must be decoded, and which
/// rendition of its frames is wanted (the full-size PNG unless said otherwise).
public struct CacheableImage: Sendable {
    /// Makes what a client keeps with each frame of this image (``FrameAttachment``).
    public typealias Preparer = @Sendable (_ index: Int, _ png: FrameBytes) -> (any FrameAttachment)?

    public var id: String
    public var frameCount: Int
    public var canvasWidth: Int
    public var canvasHeight: Int
    /// What the frames are made into: scaled, cropped, PNG or WebP (``FrameRendition``).
    public var rendition: FrameRendition
    /// Reads and indexes the image; called on a decode thread, never on the caller's.
    public var load: @Sendable () throws -> AnimatedImage
    /// Called on a decode thread for each frame as it is made, before it enters the cache; what
    /// it returns is kept with the frame, counted in the budget, and handed out with every hit.
    /// Taken from the request that first brings the image into the cache.
    public var prepare: Preparer?
    /// A full-size frame kept outside the cache that a decoder may resume from, for a frame
    /// before `index` (the nearest its owner has; nil: none). Asked on a decode thread, outside
    /// the cache's lock, when a render would otherwise replay many frames (a cold start after a
    /// restart). Its PNG must be the bytes the frame routes serve for that frame.
    public typealias SeekAnchor = @Sendable (_ before: Int) -> (frame: Int, png: [UInt8])?
    public var seekAnchor: SeekAnchor?

    public init(
        id: String, frameCount: Int, canvasWidth: Int, canvasHeight: Int, rendition: FrameRendition? = nil,
        load: @escaping @Sendable () throws -> AnimatedImage, prepare: Preparer? = nil, seekAnchor: SeekAnchor? = nil
    ) {
        self.seekAnchor = seekAnchor
        self.id = id
        self.frameCount = frameCount
        self.canvasWidth = canvasWidth
        self.canvasHeight = canvasHeight
        self.rendition = rendition ?? .exact(width: canvasWidth, height: canvasHeight)
        self.load = load
        self.prepare = prepare
    }

    /// The key the cache holds these frames under, and the one to look them up by
    /// (``FrameCache/cachedFrame(id:index:reader:)``): ``id`` for the full-size PNG, else `id`
    /// and the rendition's key.
    public var key: String {
        Self.key(id: id, rendition: rendition, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
    }

    public static func key(id: String, rendition: FrameRendition, canvasWidth: Int, canvasHeight: Int) -> String {
        isKeyedByID(rendition, canvasWidth: canvasWidth, canvasHeight: canvasHeight) ? id : id + "/" + rendition.key
    }

    /// Whether ``key`` of `rendition` of a `canvasWidth`×`canvasHeight` image is its ``id`` alone
    /// (the full-size PNG), so that a caller holding the id need not build the key.
    public static func isKeyedByID(_ rendition: FrameRendition, canvasWidth: Int, canvasHeight: Int) -> Bool {
        rendition.isExact(width: canvasWidth, height: canvasHeight)
    }

    /// An image already in memory.
    public init(id: String, image: AnimatedImage, rendition: FrameRendition? = nil) {
        self.init(
            id: id, frameCount: image.frameCount, canvasWidth: image.canvasWidth,
            canvasHeight: image.canvasHeight, rendition: rendition, load: { image })
    }
}

/// A composited frame as its rendition's bytes (PNG or WebP), with what the client attached to
/// it when it was made.
public struct EncodedFrame: Sendable {
    public let index: Int
    /// The encoded frame, where the cache keeps it (in its memory file, for `sendfile`, or on the heap).
    public let bytes: FrameBytes
    /// What ``CacheableImage/prepare`` made for this frame (nil without a preparer).
    public let attachment: (any FrameAttachment)?

    public init(index: Int, bytes: FrameBytes, attachment: (any FrameAttachment)? = nil) {
        self.index = index
        self.bytes = bytes
        self.attachment = attachment
    }

    /// The encoded frame as an array (a copy when the bytes are in the cache's memory file).
    public var png: [UInt8] { bytes.array }
}

/// What a client of the cache keeps with each frame — for the HTTP service, the frame's
/// responses encoded once — so that serving a cached frame builds nothing. Made once per frame
/// (``CacheableImage/prepare``), immutable, and counted in the cache's budget with the frame.
public protocol FrameAttachment: AnyObject, Sendable {
    /// The bytes it holds besides the frame's PNG (which it may share without copying).
    var byteCount: Int { get }
}

/// One cached frame: its PNG and its attachment, shared by the cache and the hit tables.
final class CachedFrame: Sendable {
    let bytes: FrameBytes
    let attachment: (any FrameAttachment)?

    init(bytes: FrameBytes, attachment: (any FrameAttachment)?) {
        self.bytes = bytes
        self.attachment = attachment
    }

    /// A frame on the heap (tests build states by hand).
    convenience init(png: [UInt8], attachment: (any FrameAttachment)?) {
        self.init(bytes: FrameBytes(png), attachment: attachment)
    }

    /// The bytes the frame costs the budget: its PNG's slot and its attachment.
    var count: Int { bytes.slotBytes + (attachment?.byteCount ?? 0) }

    /// The frame as handed out.
    func encoded(_ index: Int) -> EncodedFrame {
        EncodedFrame(index: index, bytes: bytes, attachment: attachment)
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
