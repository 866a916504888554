import AnimatedImage
import ArgumentParser
import FoundationEssentials
import Glibc

/// `flipbook frame FILE INDEX --output OUT.png`: one composited frame as PNG, or in a rendition
/// (`--width … --format webp`: the bytes `GET /frames/{id}/{index}?width=…` serves).
struct FrameCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "frame", abstract: "Write one composited frame as PNG, or scaled, or as WebP.")

    @OptionGroup var input: ImageInput

    @Argument(help: "The frame's index, from 0.")
    var index: Int

    @Option(name: .shortAndLong, help: "Where to write the frame.")
    var output: String

    @OptionGroup var rendition: RenditionOptions

    func run() throws {
        let (image, target) = try rendition.open(input)
        // One frame from a cold start: checkpoints kept on the way would never be used.
        let renderer = FrameRenderer(image: image, checkpointBudget: 0)
        // Decode the frames on the way on the other cores while this one composites them.
        renderer.backgroundDecoding = true
        do {
            let canvas = try renderer.render(index)
            writeFile(try rendition.encoder.encode(canvas, as: target, colorSpace: image.colorSpace), to: output)
        } catch {
            if case .frameDecodeFailed(let broken, _)? = error as? AnimatedImageError, broken <= index {
                fail("\(input.file): frame \(index) is not shown: \(error)", status: CLIExit.badImage)
            }
            input.refuse(error)
        }
    }
}
