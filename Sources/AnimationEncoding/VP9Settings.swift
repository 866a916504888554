import AnimatedImage
import CVPX

/// VP9 from libvpx, for WebM previews (``VP9Settings``).
///
/// Quality 42 by default, which is `cq-level` 37 — fewer bytes than ffmpeg's `-crf 35` (issue
/// 36's reference) at a higher mean SSIM against the rendition frames, on both benchmark inputs
/// (BENCHMARKS.md, "Animated previews as WebM"); `cpu-used` 0–8 at the `good` deadline, 1 by
/// default (ffmpeg's default for `libvpx-vp9`); 4 threads, on any machine.
public enum VP9Previews: PreviewEncoderCodec {
    public static let limits = PreviewEncoderLimits(
        defaultQuality: 42, speeds: 0...8, defaultSpeed: 1, minimumThreads: 1, defaultThreads: 4)
}

/// How libvpx encodes a WebM preview's VP9: constant quality (libvpx's `Q` mode, the mode of
/// ffmpeg's `-crf` with `libvpx-vp9` and no bitrate) at a level from `quality`, the `good`
/// deadline at `cpu-used` `speed`, libvpx's own look-ahead, alternate references and key-frame
/// placement, and a fixed number of threads.
public typealias VP9Settings = PreviewEncoderSettings<VP9Previews>

extension PreviewEncoderSettings where Codec == VP9Previews {
    /// libvpx's configuration for `width`×`height` frames with millisecond timestamps, or nil
    /// when libvpx has none for VP9. With `fixedKeyframes`, libvpx places no key frame itself:
    /// the encoder forces them (the colour and alpha streams of a WebM with alpha need theirs
    /// at the same frames).
    func configuration(width: Int, height: Int, fixedKeyframes: Bool) -> vpx_codec_enc_cfg_t? {
        var config = vpx_codec_enc_cfg_t()
        guard vpx_codec_enc_config_default(vpx_codec_vp9_cx(), &config, 0) == VPX_CODEC_OK else { return nil }
        config.g_w = UInt32(width)
        config.g_h = UInt32(height)
        config.g_threads = UInt32(threads)
        config.g_timebase = vpx_rational(num: 1, den: Int32(VP9SequenceEncoder.timescale))
        config.g_pass = VPX_RC_ONE_PASS
        config.rc_end_usage = VPX_Q
        config.rc_target_bitrate = 0
        config.rc_min_quantizer = 0
        config.rc_max_quantizer = 63
        if fixedKeyframes { config.kf_mode = VPX_KF_DISABLED }
        return config
    }

    /// The controls set on an encoder after it opens: speed, quality level (or lossless, for an
    /// alpha stream), and the colour the frames are tagged with — BT.601, limited range.
    func controls(lossless: Bool) -> [(vp8e_enc_control_id, Int32)] {
        var controls: [(vp8e_enc_control_id, Int32)] = [
            (VP8E_SET_CPUUSED, Int32(speed)),
            (VP9E_SET_COLOR_SPACE, Int32(VPX_CS_BT_601.rawValue)),
            (VP9E_SET_COLOR_RANGE, Int32(VPX_CR_STUDIO_RANGE.rawValue)),
        ]
        controls.append(lossless ? (VP9E_SET_LOSSLESS, 1) : (VP8E_SET_CQ_LEVEL, Int32(quantizerLevel)))
        return controls
    }
}
