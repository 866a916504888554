import AnimatedImage
import CAVIF
import CX264

/// Encodes equally sized RGBA frames, in order, as one MP4 (``MP4Muxer``) of H.264 from
/// libx264: High profile, 8-bit 4:2:0, no B-frames, each frame one sample lasting exactly the
/// milliseconds it is added with (a 1000 Hz timescale). Frames are converted to limited-range
/// BT.601 YUV by libavif (as AVIF previews are, in their full range) and tagged sRGB (CICP
/// 1/13/6).
///
/// H.264 has no alpha: a frame with transparency is composited onto the settings' `background`
/// first (its colour where the frame is transparent, blended where it is partly so), in RGB,
/// before the conversion to 4:2:0. Both sides must be
/// even (4:2:0 chroma covers 2×2 pixels): ``MP4PreviewMaker`` makes the rendition so.
///
/// Memory: x264's look-ahead and reference frames, a bounded number of frames of the output's
/// size (``workingBytes(width:height:frameCount:)``), and the coded samples (the output). One encoder is
/// used by one thread (x264 runs its own).
public final class H264SequenceEncoder: AnimationEncoding {
    /// Ticks per second of the samples' durations: milliseconds, so every delay is exact.
    public static let timescale = 1000
    /// H.264's largest frame side at level 6.2 is far below this; x264 refuses larger.
    public static let maxDimension = 16384

    public let width: Int
    public let height: Int
    private let encoder: OpaquePointer
    private let yuv: YUVFrame
    private let background: OpaqueBackground
    private var track: H264Track
    private var presentationMs = 0
    /// The durations of the frames given to x264 and not yet out of it, in order.
    private var waiting: [Int] = []
    public private(set) var frameCount = 0
    private var finished = false

    public init(width: Int, height: Int, settings: H264Settings) throws {
        guard width >= 2, height >= 2, width % 2 == 0, height % 2 == 0, width <= Self.maxDimension,
            height <= Self.maxDimension
        else {
            throw H264EncodingError(message: "an H.264 preview cannot be \(width)×\(height) pixels (even sides of 2 or more)")
        }
        guard var param = settings.parameters(width: width, height: height) else {
            throw H264EncodingError(message: "x264 refused preset '\(settings.preset)' or tune '\(settings.tune ?? "")'")
        }
        // The frame first: it frees itself when the encoder cannot be opened.
        guard let yuv = YUVFrame(width: width, height: height, range: AVIF_RANGE_LIMITED) else {
            throw H264EncodingError(message: "out of memory")
        }
        guard let encoder = flipbook_x264_encoder_open(&param) else {
            throw H264EncodingError(message: "x264 could not open an encoder for \(width)×\(height)")
        }
        self.width = width
        self.height = height
        self.encoder = encoder
        self.yuv = yuv
        background = settings.background
        track = H264Track(width: width, height: height, sps: [], pps: [], timescale: Self.timescale)
        try readHeaders()
    }

    deinit { x264_encoder_close(encoder) }

    /// Adds the next frame, shown for `durationMs` milliseconds (at least 1).
    public func add(_ frame: Canvas, durationMs: Int) throws {
        precondition(!finished, "frames added after finish()")
        guard frame.width == width, frame.height == height else {
            throw H264EncodingError(message: "a \(frame.width)×\(frame.height) frame in a \(width)×\(height) video")
        }
        let duration = max(1, durationMs)
        let converted = yuv.convert(frame.isOpaque ? frame.pixels : background.flattened(frame.pixels), alpha: false)
        guard converted == AVIF_RESULT_OK else {
            throw H264EncodingError(message: "converting a frame to YUV: \(String(cString: avifResultToString(converted)))")
        }
        var picture = x264_picture_t()
        x264_picture_init(&picture)
        picture.img.i_csp = X264_CSP_I420
        picture.img.i_plane = 3
        // x264 copies the planes into frames of its own before x264_encoder_encode returns.
        let (planes, strides) = (yuv.image.pointee.yuvPlanes, yuv.image.pointee.yuvRowBytes)
        picture.img.plane = (planes.0, planes.1, planes.2, nil)
        picture.img.i_stride = (Int32(strides.0), Int32(strides.1), Int32(strides.2), 0)
        picture.i_pts = Int64(presentationMs)
        presentationMs += duration
        waiting.append(duration)
        frameCount += 1
        try encode(&picture)
    }

    /// The MP4 of every frame added.
    public func finish() throws -> [UInt8] {
        precondition(!finished, "finish() called twice")
        finished = true
        guard frameCount > 0 else { throw H264EncodingError(message: "a video needs a frame") }
        while x264_encoder_delayed_frames(encoder) > 0 { try encode(nil) }
        guard track.sampleSizes.count == frameCount, waiting.isEmpty else {
            throw H264EncodingError(message: "x264 gave \(track.sampleSizes.count) frames for \(frameCount)")
        }
        return MP4Muxer.file(track)
    }

    /// Encodes `picture` (nil: a delayed one) and takes the frame x264 gives back, if any.
    private func encode(_ picture: UnsafeMutablePointer<x264_picture_t>?) throws {
        var nals: UnsafeMutablePointer<x264_nal_t>?
        var count: Int32 = 0
        var output = x264_picture_t()
        let size = x264_encoder_encode(encoder, &nals, &count, picture, &output)
        guard size >= 0 else { throw H264EncodingError(message: "x264 failed encoding a frame") }
        guard size > 0, let nals else { return }
        guard let duration = waiting.first else { throw H264EncodingError(message: "x264 gave a frame it was not given") }
        waiting.removeFirst()
        // The payloads of one call are contiguous, each NAL behind its 4-byte length (no Annex B).
        track.samples += UnsafeBufferPointer(start: nals[0].p_payload, count: Int(size))
        track.sampleSizes.append(Int(size))
        track.durations.append(duration)
        if output.b_keyframe != 0 { track.syncSamples.append(track.sampleSizes.count) }
        _ = count
    }

    /// The SPS and PPS x264 will use, for the `avcC` box (its SEI of options is left out).
    private func readHeaders() throws {
        var nals: UnsafeMutablePointer<x264_nal_t>?
        var count: Int32 = 0
        guard x264_encoder_headers(encoder, &nals, &count) >= 0, let nals else {
            throw H264EncodingError(message: "x264 gave no parameter sets")
        }
        for index in 0..<Int(count) {
            let nal = nals[index]
            // Past the 4-byte length prefix.
            let unit = Array(UnsafeBufferPointer(start: nal.p_payload + 4, count: Int(nal.i_payload) - 4))
            switch nal.i_type {
            case Int32(NAL_SPS.rawValue): track.sps = unit
            case Int32(NAL_PPS.rawValue): track.pps = unit
            default: break
            }
        }
        guard !track.sps.isEmpty, !track.pps.isEmpty else { throw H264EncodingError(message: "x264 gave no SPS or PPS") }
    }

    /// What an encoder of `frameCount` frames of `width`×`height` may hold besides the output:
    /// x264's look-ahead (60 frames at `slower`, fewer when the animation is shorter: x264
    /// cannot hold frames it was not given), its threads' frames and 8 references, each a padded
    /// 4:2:0 frame (32 pixels of border each side) with its quarter-size look-ahead copy and
    /// per-macroblock data — counted as `min(frameCount, 60) + 36` frames of twice the padded
    /// frame (96 for a long animation: a 1280×720 × 300 MP4 peaked at 318 MiB RSS for the whole
    /// command, decoding included, against 303 MB reserved here) — and the image libavif
    /// converts into with a flattened copy of a frame.
    public static func workingBytes(width: Int, height: Int, frameCount: Int) -> Int {
        let frame = (width + 64) * (height + 64) * 3 / 2
        let frames = min(max(frameCount, 1), 60) + 36
        return frames * 2 * frame + width * height * 4 + width * height * 3 / 2
    }
}

/// libx264 failed, or was given frames it cannot encode.
public struct H264EncodingError: Error, CustomStringConvertible, Equatable {
    public let message: String

    public init(message: String) { self.message = message }

    public var description: String { message }
}
