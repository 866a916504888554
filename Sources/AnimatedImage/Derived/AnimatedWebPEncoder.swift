import CWebP

/// Encodes a sequence of equally sized frames as one animated WebP with libwebp's
/// `WebPAnimEncoder` (each frame reduced to the rectangle that changed, key frames inserted by
/// libwebp's defaults), lossless or lossy at a quality, with a loop count and a duration per
/// frame. The result has exactly as many frames as were added, with exactly their durations:
/// `WebPAnimEncoder` merges a frame identical to the one before into it (one frame, the summed
/// duration), so ``finish()`` splits such merged frames again (``AnimatedWebPFrameSplitter``).
///
/// Memory: libwebp keeps a few canvases of the output's size and the encoded frames; nothing
/// scales with the number of frames but the output. One encoder is used by one thread.
public final class AnimatedWebPEncoder: AnimationEncoding {
    public let width: Int
    public let height: Int
    /// Lossy quality 1–100; nil = lossless.
    public var quality: Int? { config.lossless != 0 ? nil : Int(config.quality) }
    /// WebP's loop count (0 = forever).
    private let loopCount: Int
    private let encoder: OpaquePointer
    private let config: WebPConfig
    /// Start of each added frame, in milliseconds; the next frame's start is `elapsedMs`.
    private var startsMs: [Int] = []
    private var elapsedMs = 0
    private var finished = false

    /// - Parameters:
    ///   - loopCount: WebP's loop count, the total number of plays (0 = forever), as `playCount`.
    ///   - lossyMethod: libwebp's `method` for lossy frames (as ``WebPEncoder/lossyMethod``).
    ///   - losslessLevel: libwebp's lossless preset (as ``WebPEncoder/losslessLevel``).
    ///   - lossyTuning: for lossy frames, settings that trade encoding time for bytes
    ///     (``LossyTuning``); nil keeps libwebp's defaults.
    public convenience init(
        width: Int, height: Int, loopCount: Int, quality: Int?, lossyMethod: Int32 = 2, losslessLevel: Int32 = 1,
        lossyTuning: LossyTuning? = nil
    ) throws {
        var config = try WebPEncoder(lossyMethod: lossyMethod, losslessLevel: losslessLevel).configuration(quality: quality)
        if quality != nil, let lossyTuning { lossyTuning.apply(to: &config) }
        try self.init(
            width: width, height: height, loopCount: loopCount, config: config,
            minimizeSize: quality != nil && lossyTuning?.minimizeSize == true)
    }

    /// An encoder of frames with libwebp's settings `config` (lossless or lossy);
    /// `minimizeSize` and `allowMixed` are `WebPAnimEncoder`'s options of those names.
    init(width: Int, height: Int, loopCount: Int, config: WebPConfig, minimizeSize: Bool, allowMixed: Bool = false) throws {
        guard width > 0, height > 0, width <= Int(WEBP_MAX_DIMENSION), height <= Int(WEBP_MAX_DIMENSION) else {
            throw WebPEncodingError(message: "an animated WebP cannot be \(width)×\(height) pixels")
        }
        self.width = width
        self.height = height
        var options = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&options) != 0 else {
            throw WebPEncodingError(message: "libwebpmux's options do not match its headers")
        }
        self.loopCount = max(0, min(loopCount, 65535))
        options.anim_params.loop_count = Int32(self.loopCount)
        options.anim_params.bgcolor = 0  // transparent; browsers ignore it anyway
        options.allow_mixed = allowMixed ? 1 : 0
        options.minimize_size = minimizeSize ? 1 : 0
        self.config = config
        guard let encoder = WebPAnimEncoderNew(Int32(width), Int32(height), &options) else {
            throw WebPEncodingError(message: "libwebpmux out of memory")
        }
        self.encoder = encoder
    }

    deinit { WebPAnimEncoderDelete(encoder) }

    /// Frames added so far.
    public var frameCount: Int { startsMs.count }

    /// Adds the next frame, shown for `durationMs` milliseconds.
    public func add(_ frame: Canvas, durationMs: Int) throws {
        precondition(!finished, "frames added after finish()")
        guard frame.width == width, frame.height == height else {
            throw WebPEncodingError(message: "a \(frame.width)×\(frame.height) frame in a \(width)×\(height) animation")
        }
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw WebPEncodingError(message: "libwebp's picture did not initialise") }
        defer { WebPPictureFree(&picture) }
        picture.use_argb = 1
        picture.width = Int32(width)
        picture.height = Int32(height)
        let imported = frame.pixels.withUnsafeBufferPointer {
            WebPPictureImportRGBA(&picture, $0.baseAddress, Int32(width * 4))
        }
        guard imported != 0 else { throw WebPEncodingError(message: "out of memory importing a frame") }
        var config = self.config
        guard WebPAnimEncoderAdd(encoder, &picture, Int32(clamping: elapsedMs), &config) != 0 else {
            throw WebPEncodingError(message: lastError)
        }
        startsMs.append(elapsedMs)
        elapsedMs += max(1, durationMs)
    }

    /// The animated WebP of every frame added.
    public func finish() throws -> [UInt8] {
        precondition(!finished, "finish() called twice")
        finished = true
        guard !startsMs.isEmpty else { throw WebPEncodingError(message: "an animation needs a frame") }
        guard WebPAnimEncoderAdd(encoder, nil, Int32(clamping: elapsedMs), nil) != 0 else {
            throw WebPEncodingError(message: lastError)
        }
        var assembled = WebPData()
        WebPDataInit(&assembled)
        defer { WebPDataClear(&assembled) }
        guard WebPAnimEncoderAssemble(encoder, &assembled) != 0, let bytes = assembled.bytes else {
            throw WebPEncodingError(message: lastError)
        }
        let output = Array(UnsafeBufferPointer(start: bytes, count: assembled.size))
        return try AnimatedWebPFrameSplitter.restoreFrames(output, startsMs: startsMs, endMs: elapsedMs, loopCount: loopCount)
    }

    private var lastError: String {
        WebPAnimEncoderGetError(encoder).map { String(cString: $0) } ?? "libwebpmux failed"
    }
}

/// How hard libwebp works on the lossy frames of an animation: its `method` (0–6), its spatial
/// noise shaping (`sns_strength`, 0–100: bits moved from flat areas to busy ones) and
/// `WebPAnimEncoder`'s `minimize_size` (each sub-frame is tried with both of its rectangle
/// choices and the smaller kept, about doubling the encoding).
public struct LossyTuning: Sendable, Equatable {
    public var method: Int32
    public var spatialNoiseShaping: Int32
    public var minimizeSize: Bool

    /// Sets these in libwebp's settings for a frame.
    public func apply(to config: inout WebPConfig) {
        config.method = method
        config.sns_strength = spatialNoiseShaping
    }

    /// libwebp's settings for a lossy animation frame at `quality` (1–100).
    public func configuration(quality: Int) throws -> WebPConfig {
        var config = try WebPEncoder(lossyMethod: method).configuration(quality: quality)
        apply(to: &config)
        return config
    }
}

/// An encoder of animations that takes equally sized frames in order, each with its duration.
public protocol AnimationEncoding: AnyObject {
    /// Adds the next frame, shown for `durationMs` milliseconds.
    func add(_ frame: Canvas, durationMs: Int) throws
    /// The animation of every frame added.
    func finish() throws -> [UInt8]
}
