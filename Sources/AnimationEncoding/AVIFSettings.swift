import AnimatedImage
import CAVIF

/// AV1 from libaom through libavif, for AVIF previews (``AVIFSettings``).
///
/// Quality 44 by default, which is `cq-level` 35 — what `ffmpeg -c:v libaom-av1 -crf 35` asks of
/// libaom (BENCHMARKS.md, "Animated previews as AVIF"); `cpu-used` 0 (slowest, smallest) to 9, 6
/// as in the benchmark's ffmpeg command. Threads: 2 at the fewest, on a machine of one core too.
/// libaom codes a sequence differently on one thread than on several (`small.gif` at 320 px:
/// 82,812 against 82,079 B; libavif 0.11 passes a thread count on only when it is above 1), and
/// the same for any number from 2 up (2, 3, 4 and 8 compared): so every replica and the command
/// line make the same preview, whatever their cores.
public enum AV1Previews: PreviewEncoderCodec {
    public static let limits = PreviewEncoderLimits(
        defaultQuality: 44, speeds: 0...9, defaultSpeed: 6, minimumThreads: 2, defaultThreads: 2)
}

/// How libavif drives libaom for a preview: constant quality (libaom's `end-usage=q`) at a
/// quantizer level from `quality` (libavif 1.x's mapping of its own `quality`), an encoder speed
/// (`cpu-used`), and threads. The alpha plane is always lossless.
public typealias AVIFSettings = PreviewEncoderSettings<AV1Previews>

extension PreviewEncoderSettings where Codec == AV1Previews {
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
