import AnimatedImage
import ArgumentParser
import FlipbookService
import FoundationEssentials

/// `flipbook preview FILE --width … --output OUT.webp`: the animated WebP preview, the bytes
/// `GET /images/{id}/preview?width=…` serves (same size rule, scaler and encoder).
struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview", abstract: "Write the whole animation, scaled, as one animated WebP.")

    @Argument(help: "A GIF, PNG/APNG or WebP file.")
    var file: String

    @Option(name: .shortAndLong, help: "Where to write the WebP.")
    var output: String

    @OptionGroup var scaling: ScalingOptions
    @OptionGroup var limits: LimitOptions

    /// The preview decodes every frame in order, which checks each as a full verification
    /// would; so the file is only indexed first. A frame that does not decode is then handled
    /// as the full verification handles it — the image ends before it (the service's upload
    /// does the same) — by opening it that way and starting again: the same bytes either way.
    func validate() throws { _ = try requested() }

    /// What the flags ask for, read as the preview route reads its query.
    private func requested() throws -> RequestedRendition {
        let (items, policy) = (scaling.queryItems, scaling.policy)
        return try ScalingOptions.validated { () throws(RenditionParameterError) in try policy.preview(items) }
    }

    func run() throws {
        let indexed = openImage(file, limits: limits, verification: .structural)
        do {
            writeFile(try preview(of: indexed), to: output)
        } catch AnimatedImageError.frameDecodeFailed {
            do {
                writeFile(try preview(of: openImage(file, limits: limits, verification: .full)), to: output)
            } catch {
                fail("\(file): \(error)", status: CLIExit.badImage)
            }
        } catch {
            fail("\(file): \(error)", status: CLIExit.badImage)
        }
    }

    private func preview(of image: AnimatedImage) throws -> [UInt8] {
        try PreviewMaker.make(image, rendition: scaling.rendition(try requested(), of: image))
    }
}
