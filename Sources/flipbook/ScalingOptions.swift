import AnimatedImage
import ArgumentParser

/// The size flags of the commands that write renditions — `frame`, `frames` (with a format,
/// ``RenditionOptions``) and `preview` (always WebP): the frame routes' query parameters with the
/// same size rule, so the CLI writes the bytes the service serves.
struct ScalingOptions: ParsableArguments {
    @Option(help: "Width to fit the frames to, in CSS pixels (× --dpr in pixels).")
    var width: Int?
    @Option(help: "Height to fit the frames to, in CSS pixels (× --dpr in pixels).")
    var height: Int?
    @Option(help: "contain (default), cover (crop to fill both) or fill (stretch).")
    var fit: String = "contain"
    @Option(help: "Device pixel ratio, 1 to 4 (decimals allowed).")
    var dpr: String = "1"
    @Flag(help: "Scale up as well as down (default: never above the image's size).")
    var enlarge = false
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
        if let quality, !(1...100).contains(quality) { throw ValidationError("--quality must be 1 to 100") }
        if fit != "contain" && (width == nil || height == nil) {
            throw ValidationError("--fit \(fit) needs both --width and --height")
        }
    }

    /// The request these flags make, in `format`.
    func request(format: FrameFormat) -> RenditionRequest {
        RenditionRequest(
            width: width, height: height, dpr: DevicePixelRatio(decimal: Substring(dpr)) ?? .one,
            fit: RenditionRequest.Fit(rawValue: fit) ?? .contain, enlarge: enlarge, format: format, quality: quality)
    }

    /// The rendition of `image` in `format`, or exit 1 when it is over the output limit.
    func rendition(of image: AnimatedImage, format: FrameFormat) -> FrameRendition {
        do {
            return try request(format: format).rendition(
                canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: maxOutputDimension)
        } catch {
            fail(error.description, status: CLIExit.badImage)
        }
    }
}
