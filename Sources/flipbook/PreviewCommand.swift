import AnimatedImage
import ArgumentParser
import FlipbookService
import FoundationEssentials

/// `flipbook preview FILE --width … [--format avif|mp4|webm] [--background RRGGBB] --output OUT`: the
/// animated WebP (or AVIF, MP4 or WebM) preview, the bytes `GET /images/{id}/preview?width=…&format=…` serves (same
/// size rule, scaler, encoder and settings).
struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview", abstract: "Write the whole animation, scaled, as one animated WebP, AVIF, MP4 or WebM.")

    @OptionGroup var input: ImageInput

    @Option(name: .shortAndLong, help: "Where to write the preview.")
    var output: String

    @Option(
        help:
            "webp (default; lossless without --quality), avif (lossy; --quality 1 to 100, default 44), mp4 (H.264; default 53) or webm (VP9; default 42)."
    )
    var format = "webp"

    @Option(
        help: "mp4 only: the colour transparency is composited onto, RRGGBB or RGB hex (default ffffff, white).")
    var background: String?

    @OptionGroup var scaling: ScalingOptions

    /// The preview decodes every frame in order, which checks each as a full verification
    /// would; so the file is only indexed first. A frame that does not decode is then handled
    /// as the full verification handles it — the image ends before it (the service's upload
    /// does the same) — by opening it that way and starting again: the same bytes either way.
    func validate() throws { _ = try requested() }

    /// What the flags ask for, read as the preview route reads its query (`auto` needs an
    /// `Accept` field, which a command has not).
    private func requested() throws -> (rendition: RequestedRendition, format: PreviewFormat, background: OpaqueBackground) {
        let given = background.map { [("background", $0)] } ?? []
        let (items, policy) = (scaling.queryItems + [("format", format)] + given, scaling.policy)
        let preview = try ScalingOptions.validated { () throws(RenditionParameterError) in try policy.preview(items) }
        guard let chosen = preview.format else { throw ValidationError("--format must be webp, avif, mp4 or webm.") }
        return (preview.rendition, chosen, preview.background)
    }

    func run() throws {
        let indexed = input.open(verification: .structural)
        do {
            writeFile(try preview(of: indexed), to: output)
        } catch AnimatedImageError.frameDecodeFailed {
            do {
                writeFile(try preview(of: input.open(verification: .full)), to: output)
            } catch {
                input.refuse(error)
            }
        } catch {
            input.refuse(error)
        }
    }

    private func preview(of image: AnimatedImage) throws -> [UInt8] {
        let (requested, format, background) = try requested()
        let rendition = scaling.rendition(requested, of: image)
        return try format.makePreview(of: image, rendition: rendition, background: background)
    }
}
