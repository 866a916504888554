import AnimatedImage
import ArgumentParser
import FlipbookService

/// The size flags of the commands that write renditions — `frame`, `frames` (with a format,
/// ``RenditionOptions``) and `preview` (always WebP): the frame routes' query parameters, read by
/// the service's own parser and policy (``RenditionPolicy``), so the CLI takes, refuses and
/// writes what the service does.
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

    /// The flags as the query parameters of a frame request.
    var queryItems: [(name: String, value: String)] {
        var items: [(name: String, value: String)] = [("fit", fit), ("dpr", dpr)]
        if let width { items.append(("width", String(width))) }
        if let height { items.append(("height", String(height))) }
        if enlarge { items.append(("enlarge", "true")) }
        if let quality { items.append(("quality", String(quality))) }
        return items
    }

    /// The service's rules for these flags: every parameter allowed, no presets, PNG by default.
    var policy: RenditionPolicy { RenditionPolicy(maxOutputDimension: maxOutputDimension) }

    /// What `parse` makes of the flags; its error, the service's 400 detail, is the command line's.
    static func validated<Value>(_ parse: () throws(RenditionParameterError) -> Value) throws -> Value {
        do {
            return try parse()
        } catch {
            throw ValidationError(error.detail)
        }
    }

    /// The rendition `requested` makes of `image`, or exit 1 when it is over the output limit.
    func rendition(_ requested: RequestedRendition, of image: AnimatedImage) -> FrameRendition {
        do {
            return try policy.rendition(requested, canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight)
        } catch {
            fail(error.detail, status: CLIExit.badImage)
        }
    }
}
