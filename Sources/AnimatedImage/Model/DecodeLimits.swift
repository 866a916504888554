/// Bounds on what an input may ask of the decoder, checked while indexing, before any pixel is
/// decoded, so that a hostile file is refused for the price of reading its headers.
public struct DecodeLimits: Sendable, Hashable, Codable {
    /// Largest accepted file, in bytes.
    public var maxFileBytes: Int
    /// Largest canvas or single frame, in pixels (width × height).
    public var maxFramePixels: Int
    /// Longest canvas side, in pixels. Chromium hands frames over as media frames, whose sides
    /// cannot exceed 32 767 pixels, so a wider or taller image never shows in a browser.
    public var maxDimension: Int
    /// Most frames in one animation.
    public var maxFrames: Int
    /// Most pixels over all frames together (canvas pixels × frame count): the work a full
    /// decode implies.
    public var maxTotalPixels: Int
    /// The most memory one piece of decoding work on the image may need (``DecodeMemory``):
    /// a service's decode-memory budget, which no single decode may exceed.
    public var maxDecodeBytes: Int

    public init(
        maxFileBytes: Int = 256 << 20, maxFramePixels: Int = 50_000_000,
        maxFrames: Int = 10_000, maxTotalPixels: Int = 2_000_000_000, maxDimension: Int = 32_767,
        maxDecodeBytes: Int = .max
    ) {
        self.maxDecodeBytes = maxDecodeBytes
        self.maxDimension = maxDimension
        self.maxFileBytes = maxFileBytes
        self.maxFramePixels = maxFramePixels
        self.maxFrames = maxFrames
        self.maxTotalPixels = maxTotalPixels
    }

    public static let `default` = DecodeLimits()
}

/// A limit of ``DecodeLimits`` that an input exceeded.
public enum DecodeLimit: String, Sendable, Codable {
    case maxFileBytes, maxFramePixels, maxFrames, maxTotalPixels, maxDimension, maxDecodeBytes
}
