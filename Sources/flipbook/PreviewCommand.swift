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

    @OptionGroup var scaling: ScalingOptions
    @OptionGroup var limits: LimitOptions

    func run() throws {
        let image = openImage(file, limits: limits, verification: .full)
        let rendition = scaling.rendition(of: image, format: .webp)
        do {
            writeFile(try PreviewMaker.make(image, rendition: rendition), to: output)
        } catch {
            fail("\(file): \(error)", status: CLIExit.badImage)
        }
    }
}
