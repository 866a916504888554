import AnimatedImage
import CAVIF

/// Encodes equally sized RGBA frames, in order, as one AVIF file with libavif and libaom: an AV1
/// image sequence (`avis`) when more than one frame is added, a still AVIF for one. Each frame
/// lasts exactly the milliseconds it is added with (the track's timescale is 1000 Hz, so every
/// whole-millisecond delay is held exactly). Colour is 8-bit YUV 4:2:0, full range, converted
/// by libavif (BT.601 matrix) and tagged sRGB (CICP 1/13/6), as the frames are shown unconverted.
/// The same frames always give the same bytes (``MovieTimestamps``). A sequence plays
/// `playCount` times (0: forever), written as an edit list (``AVIFLoopCount``).
///
/// With `alpha`, every frame also goes into a lossless AV1 alpha plane (transparency exactly
/// as composited). Without it, a frame that is not opaque is refused
/// (``AVIFEncodingError/alphaNeeded``), never flattened: the caller encodes again with alpha.
///
/// Memory: libaom keeps a look-ahead of frames and its reference frames, a bounded number of
/// frames of the output's size (``workingBytes(width:height:alpha:)``), and libavif the encoded
/// frames (the output). One encoder is used by one thread.
public final class AVIFSequenceEncoder: AnimationEncoding {
    public let width: Int
    public let height: Int
    public let alpha: Bool
    /// How many times a sequence plays; 0 for forever.
    public let playCount: Int
    private let settings: AVIFSettings
    private let encoder: UnsafeMutablePointer<avifEncoder>
    private let yuv: YUVFrame
    /// Frames and their durations, held back by one so the last one added can be written as a
    /// still image when it is the only one.
    private var pending: (frame: Canvas, durationMs: Int)?
    public private(set) var frameCount = 0
    private var finished = false

    /// AV1's largest frame side in libavif (and far above any rendition's).
    public static let maxDimension = 1 << 16

    public init(width: Int, height: Int, alpha: Bool, playCount: Int = 0, settings: AVIFSettings) throws {
        guard width > 0, height > 0, width <= Self.maxDimension, height <= Self.maxDimension else {
            throw AVIFEncodingError(message: "an AVIF cannot be \(width)×\(height) pixels")
        }
        // The frame first: it frees itself when the encoder cannot be made.
        guard let yuv = YUVFrame(width: width, height: height, range: AVIF_RANGE_FULL),
            let encoder = avifEncoderCreate()
        else { throw AVIFEncodingError(message: "libavif out of memory") }
        self.width = width
        self.height = height
        self.alpha = alpha
        self.playCount = max(0, playCount)
        self.settings = settings
        self.encoder = encoder
        self.yuv = yuv
        settings.configure(encoder)
    }

    deinit { avifEncoderDestroy(encoder) }

    /// Adds the next frame, shown for `durationMs` milliseconds (at least 1).
    public func add(_ frame: Canvas, durationMs: Int) throws {
        precondition(!finished, "frames added after finish()")
        guard frame.width == width, frame.height == height else {
            throw AVIFEncodingError(message: "a \(frame.width)×\(frame.height) frame in a \(width)×\(height) animation")
        }
        if !alpha && !frame.isOpaque { throw AVIFEncodingError.alphaNeeded }
        if let pending { try write(pending.frame, durationMs: pending.durationMs, single: false) }
        pending = (frame, max(1, durationMs))
        frameCount += 1
    }

    /// The AVIF of every frame added.
    public func finish() throws -> [UInt8] {
        precondition(!finished, "finish() called twice")
        finished = true
        guard let pending else { throw AVIFEncodingError(message: "an AVIF needs a frame") }
        try write(pending.frame, durationMs: pending.durationMs, single: frameCount == 1)
        self.pending = nil
        var output = avifRWData(data: nil, size: 0)
        defer { avifRWDataFree(&output) }
        try check(avifEncoderFinish(encoder, &output), "finishing the file")
        guard let data = output.data else { throw AVIFEncodingError(message: "libavif wrote nothing") }
        let file = MovieTimestamps.cleared(Array(UnsafeBufferPointer(start: data, count: output.size)))
        return frameCount == 1 ? file : try AVIFLoopCount.written(file, playCount: playCount)
    }

    /// Converts `frame` to YUV (and alpha) in the one image this encoder reuses, and encodes it.
    private func write(_ frame: Canvas, durationMs: Int, single: Bool) throws {
        try check(yuv.convert(frame.pixels, alpha: alpha), "converting a frame to YUV")
        let flags = single ? AVIF_ADD_IMAGE_FLAG_SINGLE : AVIF_ADD_IMAGE_FLAG_NONE
        try check(
            avifEncoderAddImage(encoder, yuv.image, UInt64(durationMs), avifAddImageFlags(flags.rawValue)), "encoding a frame")
    }

    private func check(_ result: avifResult, _ what: String) throws {
        guard result == AVIF_RESULT_OK else {
            throw AVIFEncodingError(message: "libavif failed \(what): \(String(cString: avifResultToString(result)))")
        }
    }

    /// What an encoder of `width`×`height` frames may hold besides the output: libaom's
    /// look-ahead (35 frames by default) and reference frames (8, and the frames being coded),
    /// each a YUV 4:2:0 frame with libaom's borders (288 pixels across, 288 down at these
    /// sizes), for the colour and for the alpha plane's own encoder; the image libavif converts
    /// into. Rounded up to 64 frames of each.
    public static func workingBytes(width: Int, height: Int, alpha: Bool) -> Int {
        let frame = (width + 288) * (height + 288) * 3 / 2
        let planes = alpha ? 2 : 1
        return 64 * frame * planes + width * height * 4
    }
}

/// libavif failed, or was given frames it cannot encode.
public struct AVIFEncodingError: Error, CustomStringConvertible, Equatable {
    public let message: String

    public init(message: String) { self.message = message }

    public var description: String { message }

    /// A frame that is not opaque went to an encoder without an alpha plane.
    public static let alphaNeeded = AVIFEncodingError(message: "a frame has transparency and the AVIF has no alpha plane")
}
