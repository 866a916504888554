import AnimatedImage
import CAVIF

/// How libavif drives libaom for a preview: constant quality (libaom's `end-usage=q`) at a
/// quantizer level from `quality`, an encoder speed (`cpu-used`), and threads. The alpha plane
/// is always lossless.
public struct AVIFSettings: Sendable, Equatable {
    /// 1–100, higher is better: libaom's `cq-level` is `(100 − quality) × 63 / 100`, rounded
    /// to nearest (libavif 1.x's mapping of its own `quality`).
    public var quality: Int
    /// libaom's `cpu-used`, 0 (slowest, smallest) to 9.
    public var speed: Int
    /// Threads libaom may use, at least ``minimumThreads``.
    public var threads: Int

    /// The previews' default quality: 44, which is `cq-level` 35 — what `ffmpeg -c:v libaom-av1
    /// -crf 35` asks of libaom (BENCHMARKS.md, "Animated previews as AVIF").
    public static let defaultQuality = 44
    /// The previews' speed: `cpu-used` 6, as in the benchmark's ffmpeg command.
    public static let defaultSpeed = 6
    /// The fewest threads libaom is given: 2, on a machine of one core too. libaom codes a
    /// sequence differently on one thread than on several (`small.gif` at 320 px: 82,812 against
    /// 82,079 B; libavif 0.11 passes a thread count on only when it is above 1), and the same
    /// for any number from 2 up (2, 3, 4 and 8 compared): so every replica and the command line
    /// make the same preview, whatever their cores.
    public static let minimumThreads = 2

    public init(
        quality: Int = AVIFSettings.defaultQuality, speed: Int = AVIFSettings.defaultSpeed,
        threads: Int = AVIFSettings.minimumThreads
    ) {
        self.quality = EncoderQuality.clamped(quality)
        self.speed = min(9, max(0, speed))
        self.threads = max(Self.minimumThreads, threads)
    }

    /// libaom's quantizer level for ``quality``.
    public var quantizerLevel: Int { AVIFFrameEncoder.quantizerLevel(quality) }

    /// Sets these on a libavif encoder (before its first frame).
    func configure(_ encoder: UnsafeMutablePointer<avifEncoder>) {
        encoder.pointee.codecChoice = AVIF_CODEC_CHOICE_AOM
        encoder.pointee.maxThreads = Int32(threads)
        encoder.pointee.speed = Int32(speed)
        encoder.pointee.timescale = 1000
        encoder.pointee.minQuantizer = 0
        encoder.pointee.maxQuantizer = 63
        encoder.pointee.minQuantizerAlpha = AVIF_QUANTIZER_LOSSLESS
        encoder.pointee.maxQuantizerAlpha = AVIF_QUANTIZER_LOSSLESS
        avifEncoderSetCodecSpecificOption(encoder, "end-usage", "q")
        avifEncoderSetCodecSpecificOption(encoder, "cq-level", String(quantizerLevel))
    }
}
