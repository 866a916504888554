import AnimatedImage

/// What an encoder of previews that takes a quality, a speed and threads allows and starts from
/// (``AV1Previews``, ``VP9Previews``): the defaults of ``PreviewEncoderSettings`` and the ranges it
/// brings its values into.
public struct PreviewEncoderLimits: Sendable {
    /// The previews' quality when none is asked for, 1–100.
    public var defaultQuality: Int
    /// The encoder's speeds (its `cpu-used`): a speed outside is brought to the nearest end.
    public var speeds: ClosedRange<Int>
    /// The previews' speed.
    public var defaultSpeed: Int
    /// The fewest threads the encoder is given.
    public var minimumThreads: Int
    /// The previews' threads: a constant, not the core count, so that every replica and the
    /// command line make the same bytes (ETags and `If-Range` across replicas rely on it).
    public var defaultThreads: Int
}

/// A codec of ``PreviewEncoderSettings``: its limits.
public protocol PreviewEncoderCodec: Sendable {
    /// The codec's defaults and ranges.
    static var limits: PreviewEncoderLimits { get }
}

/// How a preview's encoder is driven: a constant quality, a speed and a number of threads,
/// brought into `Codec`'s ranges (``PreviewEncoderLimits``). ``AVIFSettings`` and ``VP9Settings``
/// add what their codec's library is told.
public struct PreviewEncoderSettings<Codec: PreviewEncoderCodec>: Sendable, Equatable {
    /// 1–100, higher is better: the codec's quantizer level is `(100 − quality) × 63 / 100`,
    /// rounded to nearest (``EncoderQuality``).
    public var quality: Int
    /// The codec's `cpu-used`, within ``PreviewEncoderLimits/speeds``: higher is faster and larger.
    public var speed: Int
    /// Threads the codec may use, at least ``minimumThreads``.
    public var threads: Int

    /// The previews' default quality.
    public static var defaultQuality: Int { Codec.limits.defaultQuality }
    /// The previews' speed.
    public static var defaultSpeed: Int { Codec.limits.defaultSpeed }
    /// The previews' threads, on any machine.
    public static var defaultThreads: Int { Codec.limits.defaultThreads }
    /// The fewest threads the codec is given.
    public static var minimumThreads: Int { Codec.limits.minimumThreads }

    public init(
        quality: Int = Codec.limits.defaultQuality, speed: Int = Codec.limits.defaultSpeed,
        threads: Int = Codec.limits.defaultThreads
    ) {
        let limits = Codec.limits
        self.quality = EncoderQuality.clamped(quality)
        self.speed = min(limits.speeds.upperBound, max(limits.speeds.lowerBound, speed))
        self.threads = max(limits.minimumThreads, threads)
    }

    /// The codec's quantizer level for ``quality``, 0 (best) to 63.
    public var quantizerLevel: Int { EncoderQuality.level(quality, worst: 63) }
}
