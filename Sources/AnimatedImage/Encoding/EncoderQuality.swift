/// The `quality` of frames and previews, 1 (smallest) to 100 (best), and its mapping onto an
/// encoder's own quantizer scale: one rule for every encoder, so that the same `quality` means
/// the same thing to AVIF, VP9, H.264 and WebP.
public enum EncoderQuality {
    /// `quality` brought into 1–100.
    public static func clamped(_ quality: Int) -> Int { min(100, max(1, quality)) }

    /// `quality` on an encoder's scale from 0 (best) to `worst`: `(100 − quality) × worst / 100`,
    /// rounded to nearest (libavif 1.x's mapping of its own `quality` onto libaom's 63).
    public static func level(_ quality: Int, worst: Int) -> Int { ((100 - clamped(quality)) * worst + 50) / 100 }
}
