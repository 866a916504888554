/// Everything known about an image without decoding a pixel: format, canvas, frames with their
/// rectangles, disposal, blending, raw delays and data locations, and the loop count.
///
/// Built by one pass over the container; memory is proportional to the number of frames.
public struct ImageIndex: Sendable {
    public let format: ImageFormat
    public let canvasWidth: Int
    public let canvasHeight: Int
    /// The frames that are structurally complete, in display order.
    public internal(set) var frames: [FrameDescriptor]
    /// Total number of plays, 0 = forever (GIF without NETSCAPE2.0: 1; NETSCAPE N > 0: N + 1;
    /// APNG `num_plays` and WebP loop count as stated).
    public let playCount: Int
    /// True when the file ends early or is damaged after its last complete frame.
    public internal(set) var truncated: Bool
    /// The colour-space chunks every served frame carries (none for sRGB and GIF).
    public let colorSpace: ColorSpaceChunks
    /// Format-specific facts the frame decoders need.
    let header: FormatHeader

    init(
        format: ImageFormat, canvasWidth: Int, canvasHeight: Int, frames: [FrameDescriptor],
        playCount: Int, truncated: Bool, colorSpace: ColorSpaceChunks = .none, header: FormatHeader
    ) {
        self.format = format
        self.canvasWidth = canvasWidth
        self.canvasHeight = canvasHeight
        self.frames = frames
        self.playCount = playCount
        self.truncated = truncated
        self.colorSpace = colorSpace
        self.header = header
    }

    public var canvasRect: PixelRect { PixelRect(x: 0, y: 0, width: canvasWidth, height: canvasHeight) }

    /// Bytes of one decoded RGBA canvas.
    public var bytesPerFrame: Int { canvasWidth * canvasHeight * 4 }

    /// Keeps only the first `count` frames and marks the image truncated (a later frame's data
    /// turned out not to decode).
    mutating func truncate(to count: Int) {
        guard count < frames.count else { return }
        frames.removeSubrange(count...)
        truncated = true
    }
}

/// Format-specific facts kept by an index for its frame decoders.
enum FormatHeader: Sendable {
    case gif(GIFHeader)
    case png(PNGHeader)
    /// Whether the VP8X header sets the animation flag.
    case webp(animated: Bool)
}
