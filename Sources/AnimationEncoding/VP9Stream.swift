import CVPX

/// One libvpx VP9 encoder: I420 pictures in, one coded frame out per picture, in order (libvpx
/// packs a hidden alternate reference into the next shown frame as a VP9 superframe, so every
/// frame it gives is shown). A WebM preview has one for its colour and, with alpha, one more
/// for its alpha plane. Used by one thread (libvpx runs its own).
final class VP9Stream {
    /// A coded frame: its bytes and whether it is a key frame.
    struct Frame {
        var bytes: [UInt8]
        var isKey: Bool
    }

    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>
    private let deadline: UInt
    /// The frames coded so far, in order.
    private(set) var frames: [Frame] = []

    init(width: Int, height: Int, settings: VP9Settings, lossless: Bool, fixedKeyframes: Bool) throws {
        guard var config = settings.configuration(width: width, height: height, fixedKeyframes: fixedKeyframes) else {
            throw VP9EncodingError(message: "libvpx has no VP9 encoder configuration")
        }
        context = .allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        deadline = UInt(VPX_DL_GOOD_QUALITY)
        guard flipbook_vpx_encoder_open(context, &config) == VPX_CODEC_OK else {
            context.deallocate()
            throw VP9EncodingError(message: "libvpx could not open a VP9 encoder for \(width)×\(height)")
        }
        for (control, value) in settings.controls(lossless: lossless) {
            guard flipbook_vpx_control(context, Int32(control.rawValue), value) == VPX_CODEC_OK else {
                vpx_codec_destroy(context)
                context.deallocate()
                throw VP9EncodingError(message: "libvpx refused control \(control.rawValue) = \(value)")
            }
        }
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
    }

    /// Encodes `image` at `pts` (milliseconds) lasting `duration`, a key frame when `key`; nil
    /// flushes the frames libvpx holds back. Takes every coded frame libvpx gives.
    func encode(_ image: UnsafeMutablePointer<vpx_image_t>?, pts: Int, duration: Int, key: Bool) throws {
        let flags: vpx_enc_frame_flags_t = key ? vpx_enc_frame_flags_t(VPX_EFLAG_FORCE_KF) : 0
        let status = vpx_codec_encode(context, image, vpx_codec_pts_t(pts), UInt(duration), flags, deadline)
        guard status == VPX_CODEC_OK else {
            let detail = vpx_codec_error_detail(context).map { String(cString: $0) } ?? ""
            throw VP9EncodingError(
                message: "libvpx failed encoding a frame: \(String(cString: vpx_codec_error(context))) \(detail)")
        }
        var iterator: vpx_codec_iter_t? = nil
        while let packet = vpx_codec_get_cx_data(context, &iterator) {
            guard packet.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
            let frame = packet.pointee.data.frame
            guard frame.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_INVISIBLE) == 0 else {
                throw VP9EncodingError(message: "libvpx gave a hidden frame outside a superframe")
            }
            let bytes = frame.buf.assumingMemoryBound(to: UInt8.self)
            frames.append(
                Frame(
                    bytes: Array(UnsafeBufferPointer(start: bytes, count: frame.sz)),
                    isKey: frame.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_KEY) != 0))
        }
    }

    /// Flushes libvpx until it holds no frame back.
    func finish() throws {
        while true {
            let before = frames.count
            try encode(nil, pts: 0, duration: 1, key: false)
            if frames.count == before { return }
        }
    }
}
