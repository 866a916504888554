import AnimatedImage
import ArgumentParser

/// The rendition flags of `flipbook frame` and `flipbook frames`: the size flags
/// (``ScalingOptions``) and the format. (No `auto` format: there is no `Accept` to negotiate
/// with.)
struct RenditionOptions: ParsableArguments {
    @OptionGroup var scaling: ScalingOptions
    @Option(help: "png (default) or webp.")
    var format: String = "png"

    func validate() throws {
        guard let chosen = FrameFormat(rawValue: format) else { throw ValidationError("--format must be png or webp") }
        if scaling.quality != nil, chosen != .webp {
            throw ValidationError("--quality applies to --format webp only")
        }
    }

    /// The rendition of `image`, or exit 1 when it is over the output limit.
    func rendition(of image: AnimatedImage) -> FrameRendition {
        scaling.rendition(of: image, format: FrameFormat(rawValue: format) ?? .png)
    }

    /// Starts libvips now, while the process has one thread, when scaling `image` to `target`
    /// uses it (a reduction by more than 40×); other runs need not pay for loading it.
    static func startLibvipsIfUsed(_ image: AnimatedImage, _ target: FrameRendition) {
        if Resampler.usesLibvips(
            width: image.canvasWidth, height: image.canvasHeight, scaledWidth: target.scaledWidth,
            scaledHeight: target.scaledHeight)
        {
            Resampler.start()
        }
    }

    /// The encoder the service's frame cache uses, at `compressionLevel` for PNG.
    static func encoder(compressionLevel: Int) -> RenditionEncoder {
        RenditionEncoder(png: PNGEncoder(compressionLevel: compressionLevel))
    }
}
