import AnimatedImage
import ArgumentParser
import FlipbookService

/// The rendition flags of `flipbook frame` and `flipbook frames`: the size flags
/// (``ScalingOptions``), the format and PNG's deflate level. (No `auto` format: there is no
/// `Accept` to negotiate with.)
struct RenditionOptions: ParsableArguments {
    @OptionGroup var scaling: ScalingOptions
    @Option(help: "png (default), webp, or avif (lossy; --quality 1 to 100, default 44).")
    var format: String = "png"
    @Option(help: "Deflate compression level of PNG output, 0 (stored) to 9 (smallest).")
    var compressionLevel = 1

    func validate() throws { _ = try requested() }

    /// What the flags ask for, read as the frame routes read their query.
    func requested() throws -> RequestedRendition {
        let items = scaling.queryItems + [("format", format)]
        let policy = scaling.policy
        return try ScalingOptions.validated { () throws(RenditionParameterError) in
            try policy.requested(items, accept: nil, formats: [.png, .webp, .avif])
        }
    }

    /// `input` opened (exit 1 when it cannot be served) with the rendition the flags make of it.
    func open(_ input: ImageInput) throws -> (AnimatedImage, FrameRendition) {
        let requested = try requested()
        let image = input.open(verification: .structural)
        return (image, scaling.rendition(requested, of: image))
    }

    /// The encoder the service's frame cache uses, at `--compression-level` for PNG.
    var encoder: RenditionEncoder {
        RenditionEncoder(png: PNGEncoder(compressionLevel: compressionLevel))
    }
}
