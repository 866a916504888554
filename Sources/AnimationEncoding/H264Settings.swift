import AnimatedImage
import CX264

/// How libx264 encodes an MP4 preview: constant rate factor from `quality`, x264's `slower`
/// preset, no B-frames (each sample's decode time is its presentation time, so the sample
/// table's durations are the delay table itself), and threads. Without B-frames, `slower` (8
/// references, exhaustive partitions, trellis) is what brings the bytes at equal SSIM under
/// ffmpeg's defaults (`medium` with 3 B-frames): BENCHMARKS.md, "Animated previews as MP4".
public struct H264Settings: Sendable, Equatable {
    /// 1–100, higher is better: x264's `crf` is `(100 − quality) × 51 / 100`, rounded.
    public var quality: Int
    /// x264's frame threads. x264's output depends on their number (a frame thread searches
    /// motion only in rows its reference has finished), so it is the same constant everywhere
    /// (``defaultThreads``), not the core count: every replica and the command line make the
    /// same bytes, which an ETag and `If-Range` across replicas rely on.
    public var threads: Int
    /// x264's preset name.
    public var preset: String
    /// x264's tune name, or nil for none.
    public var tune: String?
    /// The colour transparent pixels are composited onto (H.264 has no alpha): white unless asked.
    public var background: OpaqueBackground

    /// The previews' default quality: 53, which is `crf` 24 — at `slower` without B-frames,
    /// a mean SSIM above ffmpeg's at its default `crf` 23 (BENCHMARKS.md, "Animated previews
    /// as MP4").
    public static let defaultQuality = 53
    /// The previews' preset.
    public static let defaultPreset = "slower"
    /// The previews' frame threads: 4, on any machine.
    public static let defaultThreads = 4

    public init(
        quality: Int = H264Settings.defaultQuality, threads: Int = H264Settings.defaultThreads,
        preset: String = H264Settings.defaultPreset,
        tune: String? = nil, background: OpaqueBackground = .white
    ) {
        self.quality = EncoderQuality.clamped(quality)
        self.threads = max(1, threads)
        self.preset = preset
        self.tune = tune
        self.background = background
    }

    /// x264's constant rate factor for ``quality``.
    public var rateFactor: Int { EncoderQuality.level(quality, worst: 51) }

    /// x264's parameters for `width`×`height` frames with millisecond timestamps, or nil when
    /// x264 refuses the preset or tune.
    ///
    /// x264 never uses AVX-512 (AVX2 and below): libx264 0.164's (Debian 12) AVX-512
    /// macroblock-tree propagation takes 8 macroblocks at a time with no mask for a row's end,
    /// so in the last row it reads past the frame's arrays, and the first frame's bottom-right
    /// macroblock got a quantiser that depended on what that memory held (other builds' data in
    /// a service; never so in a lone command). Measured 2026-11-29 on an AVX-512 CPU with 4
    /// threads × 6 previews of iss634.gif (`H264ConcurrencyTests`): 1–14 of 24 MP4s differed
    /// from the lone builds' in each of 6 runs with AVX-512, none in 6 runs without; one x264
    /// encoder at a time in the process did not help (1–4 of 24). Without it, the lone build
    /// made the same bytes as before; an AVX-512 CPU now runs the code an AVX2 one does.
    func parameters(width: Int, height: Int) -> x264_param_t? {
        var param = x264_param_t()
        guard x264_param_default_preset(&param, preset, tune) == 0 else { return nil }
        param.i_threads = Int32(threads)
        param.b_deterministic = 1
        param.cpu &= ~UInt32(X264_CPU_AVX512)
        param.i_log_level = X264_LOG_NONE
        param.i_width = Int32(width)
        param.i_height = Int32(height)
        param.i_csp = X264_CSP_I420
        param.i_bframe = 0
        param.b_vfr_input = 1
        param.i_timebase_num = 1
        param.i_timebase_den = UInt32(H264SequenceEncoder.timescale)
        param.i_fps_num = 25
        param.i_fps_den = 1
        param.rc.i_rc_method = X264_RC_CRF
        param.rc.f_rf_constant = Float(rateFactor)
        param.b_annexb = 0
        param.b_repeat_headers = 0
        // BT.601 matrix, limited range, sRGB primaries and transfer (CICP 1/13/6), as the frames
        // are converted and shown.
        param.vui.b_fullrange = 0
        param.vui.i_colorprim = 1
        param.vui.i_transfer = 13
        param.vui.i_colmatrix = 6
        guard x264_param_apply_profile(&param, "high") == 0 else { return nil }
        return param
    }
}
