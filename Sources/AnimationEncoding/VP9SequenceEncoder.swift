import AnimatedImage
import CAVIF
import CVPX

/// Encodes equally sized RGBA frames, in order, as one WebM (``WebMMuxer``) of VP9 from libvpx:
/// profile 0, 8-bit 4:2:0, each frame one block lasting exactly the milliseconds it is added
/// with (a 1 ms timestamp scale). Frames are converted to limited-range BT.601 YUV by libavif
/// (as MP4 previews are) and tagged sRGB (CICP 1/13/6).
///
/// With `alpha`, the frames' alpha goes into a second VP9 stream, lossless (transparency exactly
/// as composited), its luma the alpha and its chroma grey, each frame's alpha carried in its
/// block's `BlockAdditions` (`BlockAddID` 1) and the track marked `AlphaMode` 1: VP9 alpha as
/// Chromium and FFmpeg play it. Both streams have their key frames at the same frames (the first,
/// then every ``keyframeInterval``), so that either can be decoded from any key frame. Without
/// `alpha`, a frame that is not opaque is refused (``VP9EncodingError/alphaNeeded``), never
/// flattened: the caller encodes again with alpha.
///
/// Memory: libvpx's look-ahead and reference frames for each stream, a bounded number of frames
/// of the output's size (``workingBytes(width:height:alpha:)``), and the coded frames (the
/// output). One encoder is used by one thread.
public final class VP9SequenceEncoder: AnimationEncoding {
    /// Ticks per second of the blocks' times: milliseconds, so every delay is exact.
    public static let timescale = 1000
    /// VP9's largest frame side.
    public static let maxDimension = 65536
    /// Frames between forced key frames when there is alpha (libvpx's own longest interval).
    public static let keyframeInterval = 128

    public let width: Int
    public let height: Int
    public let alpha: Bool
    private let colour: VP9Stream
    private let alphaStream: VP9Stream?
    private let yuv: YUVFrame
    private let alphaPlanes: AlphaPlanes?
    private var durations: [Int] = []
    private var presentationMs = 0
    public private(set) var frameCount = 0
    private var finished = false

    public init(width: Int, height: Int, alpha: Bool, settings: VP9Settings) throws {
        guard width > 0, height > 0, width <= Self.maxDimension, height <= Self.maxDimension else {
            throw VP9EncodingError(message: "a VP9 preview cannot be \(width)×\(height) pixels")
        }
        guard let yuv = YUVFrame(width: width, height: height, range: AVIF_RANGE_LIMITED) else {
            throw VP9EncodingError(message: "out of memory")
        }
        self.width = width
        self.height = height
        self.alpha = alpha
        self.yuv = yuv
        colour = try VP9Stream(width: width, height: height, settings: settings, lossless: false, fixedKeyframes: alpha)
        alphaStream =
            alpha ? try VP9Stream(width: width, height: height, settings: settings, lossless: true, fixedKeyframes: true) : nil
        alphaPlanes = alpha ? AlphaPlanes(width: width, height: height) : nil
    }

    /// Adds the next frame, shown for `durationMs` milliseconds (at least 1).
    public func add(_ frame: Canvas, durationMs: Int) throws {
        precondition(!finished, "frames added after finish()")
        guard frame.width == width, frame.height == height else {
            throw VP9EncodingError(message: "a \(frame.width)×\(frame.height) frame in a \(width)×\(height) video")
        }
        if !alpha && !frame.isOpaque { throw VP9EncodingError.alphaNeeded }
        let duration = max(1, durationMs)
        let converted = yuv.convert(frame.pixels, alpha: false)
        guard converted == AVIF_RESULT_OK else {
            throw VP9EncodingError(message: "converting a frame to YUV: \(String(cString: avifResultToString(converted)))")
        }
        let key = alpha && frameCount % Self.keyframeInterval == 0
        var picture = Self.picture(width: width, height: height)
        let (planes, strides) = (yuv.image.pointee.yuvPlanes, yuv.image.pointee.yuvRowBytes)
        picture.planes = (planes.0, planes.1, planes.2, nil)
        picture.stride = (Int32(strides.0), Int32(strides.1), Int32(strides.2), 0)
        try colour.encode(&picture, pts: presentationMs, duration: duration, key: key)
        if let alphaStream, let alphaPlanes {
            var alphaPicture = alphaPlanes.picture(of: frame.pixels)
            try alphaStream.encode(&alphaPicture, pts: presentationMs, duration: duration, key: key)
        }
        presentationMs += duration
        durations.append(duration)
        frameCount += 1
    }

    /// The WebM of every frame added.
    public func finish() throws -> [UInt8] {
        precondition(!finished, "finish() called twice")
        finished = true
        guard frameCount > 0 else { throw VP9EncodingError(message: "a video needs a frame") }
        try colour.finish()
        try alphaStream?.finish()
        guard colour.frames.count == frameCount, alphaStream.map({ $0.frames.count == frameCount }) ?? true else {
            throw VP9EncodingError(message: "libvpx gave \(colour.frames.count) frames for \(frameCount)")
        }
        var blocks: [WebMMuxer.Block] = []
        blocks.reserveCapacity(frameCount)
        var time = 0
        for (index, coded) in colour.frames.enumerated() {
            let alphaFrame = alphaStream?.frames[index]
            if let alphaFrame, alphaFrame.isKey != coded.isKey {
                throw VP9EncodingError(message: "libvpx made frame \(index) a key frame in one stream only")
            }
            blocks.append(
                WebMMuxer.Block(
                    timeMs: time, durationMs: durations[index], isKey: coded.isKey, frame: coded.bytes,
                    alpha: alphaFrame?.bytes))
            time += durations[index]
        }
        return WebMMuxer.file(WebMMuxer.Track(width: width, height: height, alpha: alpha, blocks: blocks))
    }

    /// A `vpx_image_t` describing 8-bit I420 planes of `width`×`height` (the planes set after).
    static func picture(width: Int, height: Int) -> vpx_image_t {
        var picture = vpx_image_t()
        picture.fmt = VPX_IMG_FMT_I420
        picture.cs = VPX_CS_BT_601
        picture.range = VPX_CR_STUDIO_RANGE
        picture.w = UInt32(width)
        picture.h = UInt32(height)
        picture.d_w = UInt32(width)
        picture.d_h = UInt32(height)
        picture.r_w = UInt32(width)
        picture.r_h = UInt32(height)
        picture.bit_depth = 8
        picture.x_chroma_shift = 1
        picture.y_chroma_shift = 1
        picture.bps = 12
        return picture
    }

    /// What an encoder of `width`×`height` frames may hold besides the output: for each stream,
    /// libvpx's look-ahead (25 frames), reference and alternate-reference frames and the frames
    /// being coded, each a 4:2:0 frame with libvpx's border (160 pixels each side), rounded up
    /// to 48 frames; the image libavif converts into and the alpha stream's planes.
    public static func workingBytes(width: Int, height: Int, alpha: Bool) -> Int {
        let frame = (width + 320) * (height + 320) * 3 / 2
        let streams = alpha ? 2 : 1
        return 48 * frame * streams + width * height * 3
    }
}

/// The alpha stream's pictures: luma the frame's alpha, both chroma planes grey (128).
private final class AlphaPlanes {
    private let width: Int
    private let height: Int
    private let luma: UnsafeMutableBufferPointer<UInt8>
    private let grey: UnsafeMutableBufferPointer<UInt8>

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        luma = .allocate(capacity: width * height)
        luma.initialize(repeating: 255)
        grey = .allocate(capacity: ((width + 1) / 2) * ((height + 1) / 2))
        grey.initialize(repeating: 128)
    }

    deinit {
        luma.deallocate()
        grey.deallocate()
    }

    /// The picture of `pixels`' alpha (RGBA rows of the width). Valid until the next call.
    func picture(of pixels: [UInt8]) -> vpx_image_t {
        pixels.withUnsafeBufferPointer { rgba in
            for index in 0..<luma.count { luma[index] = rgba[index * 4 + 3] }
        }
        var picture = VP9SequenceEncoder.picture(width: width, height: height)
        let chromaStride = Int32((width + 1) / 2)
        picture.planes = (luma.baseAddress, grey.baseAddress, grey.baseAddress, nil)
        picture.stride = (Int32(width), chromaStride, chromaStride, 0)
        return picture
    }
}

/// libvpx failed, or was given frames it cannot encode.
public struct VP9EncodingError: Error, CustomStringConvertible, Equatable {
    public let message: String

    public init(message: String) { self.message = message }

    public var description: String { message }

    /// A frame that is not opaque went to an encoder without an alpha stream.
    public static let alphaNeeded = VP9EncodingError(message: "a frame has transparency and the WebM has no alpha stream")
}
