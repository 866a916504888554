/// One frame as the index sees it: where it is drawn, how it is combined and disposed, how
/// long the file says to show it, and where its compressed data lies. No pixels.
public struct FrameDescriptor: Sendable, Hashable {
    /// The frame's rectangle as the file states it (may reach outside the canvas).
    public var rect: PixelRect
    public var disposal: FrameDisposal
    public var blend: FrameBlend
    /// The delay the file states, in milliseconds (GIF centiseconds × 10, APNG num/den s, WebP ms).
    public var rawDelayMs: Int
    /// True when the frame's own pixels are known to cover its rectangle opaquely, so drawing it
    /// needs nothing from beneath (a GIF frame without a transparent index; a WebP/PNG frame
    /// without alpha).
    public var isOpaque: Bool
    /// Where the frame's compressed data lies in the file.
    public var source: FrameSource
}

/// The location and format-specific parameters of a frame's compressed data.
public enum FrameSource: Sendable, Hashable {
    /// A GIF image: the offset of its image descriptor (0x2C) and the end of its last data
    /// sub-block, plus the graphic control's transparent index when the flag is set.
    case gif(descriptorOffset: Int, end: Int, transparentIndex: Int?)
    /// An APNG frame: the byte ranges of its zlib data (IDAT payloads, or fdAT payloads
    /// without their sequence numbers), in order.
    case png(dataRanges: [Range<Int>])
    /// A WebP frame: the byte range of its bitstream chunks (optional ALPH + VP8, or VP8L).
    case webp(range: Range<Int>, hasAlpha: Bool)
}
