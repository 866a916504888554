import AnimatedImage
import ArgumentParser

/// The rendition flags of `flipbook frame` and `flipbook frames`: the frame routes' query
/// parameters, with the same size rule and encoders, so the CLI writes the bytes the service
/// serves. (No `auto` format: there is no `Accept` to negotiate with.)
struct RenditionOptions: ParsableArguments {
    @Option(help: "Width to fit the frame to, in CSS pixels (× --dpr in pixels).")
    var width: Int?
    @Option(help: "Height to fit the frame to, in CSS pixels (× --dpr in pixels).")
    var height: Int?
    @Option(help: "contain (default), cover (crop to fill both) or fill (stretch).")
    var fit: String = "contain"
    @Option(help: "Device pixel ratio, 1 to 4 (decimals allowed).")
    var dpr: String = "1"
    @Flag(help: "Scale up as well as down (default: never above the image's size).")
    var enlarge = false
    @Option(help: "png (default) or webp.")
    var format: String = "png"
    @Option(help: "Lossy WebP quality, 1 to 100 (default: lossless).")
    var quality: Int?
    @Option(help: "Largest output side in pixels (the service's limits.maxOutputDimension).")
    var maxOutputDimension = 4096

    func validate() throws {
        if let width, width <= 0 { throw ValidationError("--width must be a positive integer") }
        if let height, height <= 0 { throw ValidationError("--height must be a positive integer") }
        guard RenditionRequest.Fit(rawValue: fit) != nil else { throw ValidationError("--fit must be contain, cover or fill") }
        guard DevicePixelRatio(decimal: Substring(dpr)) != nil else {
            throw ValidationError("--dpr must be a decimal number from 1 to 4")
        }
        guard let chosen = FrameFormat(rawValue: format) else { throw ValidationError("--format must be png or webp") }
        if let quality {
            guard (1...100).contains(quality) else { throw ValidationError("--quality must be 1 to 100") }
            guard chosen == .webp else { throw ValidationError("--quality applies to --format webp only") }
        }
        if fit != "contain" && (width == nil || height == nil) {
            throw ValidationError("--fit \(fit) needs both --width and --height")
        }
    }

    var request: RenditionRequest {
        RenditionRequest(
            width: width, height: height, dpr: DevicePixelRatio(decimal: Substring(dpr)) ?? .one,
            fit: RenditionRequest.Fit(rawValue: fit) ?? .contain, enlarge: enlarge,
            format: FrameFormat(rawValue: format) ?? .png, quality: quality)
    }

    /// The rendition of `image`, or exit 1 when it is over the output limit.
    func rendition(of image: AnimatedImage) -> FrameRendition {
        do {
            return try request.rendition(
                canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: maxOutputDimension)
        } catch {
            fail(error.description, status: CLIExit.badImage)
        }
    }

    /// The encoder the service's frame cache uses, at `compressionLevel` for PNG.
    static func encoder(compressionLevel: Int) -> RenditionEncoder {
        RenditionEncoder(png: PNGEncoder(compressionLevel: compressionLevel))
    }
}
