/// How much memory decoding an image takes besides what a cache keeps: what a decode-memory
/// budget reserves before the work starts, and what ``DecodeLimits/maxDecodeBytes`` is held
/// against when an image is indexed.
///
/// The figures are upper bounds per pixel, from the buffers the code allocates and checked
/// against peak RSS on 7000×7000 frames (49 MP; `flipbook info` decodes every frame once,
/// `flipbook frame … 0` renders and encodes one): a GIF frame's data decodes to one palette
/// index per pixel (measured 0.94 B/px); an APNG frame to RGBA (4, streamed to libpng:
/// ``PNGFrameStream``); a WebP frame to RGBA plus libwebp's own planes (lossy 3.9, lossy with
/// alpha 5.0, lossless 7.8). A frame disposed to "previous" saves the pixels under it (4 B/px
/// of its rectangle). Encoding a canvas as PNG (``PNGEncoder``) holds the filtered rows (up to
/// 4 B/px), the deflate output (up to as much again for incompressible pixels) and the file it
/// becomes: at most 12 B/px of the canvas (a noisy 49 MP canvas measured 7.7). Decoding and
/// encoding do not overlap: a frame's pixels are drawn and let go before the canvas is encoded.
public struct DecodeMemory: Sendable, Equatable {
    /// One RGBA canvas of the image.
    public var canvasBytes: Int
    /// Decoding every frame's data once, as upload verification does (the largest frame's).
    public var verificationBytes: Int
    /// Rendering one frame and encoding it as PNG, besides the canvas a renderer keeps (and
    /// its checkpoints).
    public var renderBytes: Int
    /// Drawing one frame onto the canvas, without encoding it (the largest frame's decoded
    /// data, and the pixels a "previous" disposal saves): what a renderer needs besides its
    /// canvas when its frames are scaled rather than encoded (previews, storyboards).
    public var frameDataBytes: Int

    /// The least one render from cold needs: the work plus the renderer's canvas. An image
    /// whose figure exceeds the budget can never be rendered within it.
    public var coldRenderBytes: Int { renderBytes + canvasBytes }

    /// The most any single piece of work on the image needs (the figure a limit is held against).
    public var largestBytes: Int { max(verificationBytes, coldRenderBytes) }

    /// Bytes per pixel of a frame's decoded data (see the type's documentation).
    static func framePixelBytes(_ format: ImageFormat) -> Int {
        switch format {
        case .gif: return 1
        case .png, .apng: return 4
        case .webp: return 8
        }
    }

    static let savedPixelBytes = 4
    static let encodePixelBytes = 12
    /// Fixed costs per piece of work (tables, the decoders' state, a stored block, rows).
    static let overheadBytes = 1 << 20

    init(index: ImageIndex) {
        let canvasPixels = index.canvasWidth * index.canvasHeight
        var decode = 0
        var verify = 0
        let perPixel = Self.framePixelBytes(index.format)
        for frame in index.frames {
            let pixels = frame.rect.width * frame.rect.height
            verify = max(verify, pixels * perPixel)
            decode = max(decode, pixels * (perPixel + (frame.disposal == .previous ? Self.savedPixelBytes : 0)))
        }
        canvasBytes = index.bytesPerFrame
        verificationBytes = verify + Self.overheadBytes
        renderBytes = max(decode, canvasPixels * Self.encodePixelBytes) + Self.overheadBytes
        frameDataBytes = decode + Self.overheadBytes
    }
}
