import AnimatedImage
import ArgumentParser
import Foundation

/// `flipbook preview FILE --width … --output OUT.webp`: the animated WebP preview, the bytes
/// `GET /images/{id}/preview?width=…` serves (same size rule, scaler and encoder).
struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview", abstract: "Write the whole animation, scaled, as one animated WebP.")

    @Argument(help: "A GIF, PNG/APNG or WebP file.")
    var file: String

    @Option(name: .shortAndLong, help: "Where to write the WebP.")
    var output: String

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

    @OptionGroup var limits: LimitOptions

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

    func run() throws {
        let image = openImage(file, limits: limits, verification: .full)
        let request = RenditionRequest(
            width: width, height: height, dpr: DevicePixelRatio(decimal: Substring(dpr)) ?? .one,
            fit: RenditionRequest.Fit(rawValue: fit) ?? .contain, enlarge: enlarge, format: .webp, quality: quality)
        do {
            let rendition = try request.rendition(
                canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: maxOutputDimension)
            writeFile(try PreviewMaker.make(image, rendition: rendition), to: output)
        } catch {
            fail("\(file): \(error)", status: CLIExit.badImage)
        }
    }
}
