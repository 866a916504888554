import AnimatedImage
import ArgumentParser
import FlipbookService
import FoundationEssentials
import Glibc

/// `flipbook info FILE`: the image's metadata JSON (as the API serves it, without `id`).
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info", abstract: "Print an image's metadata and delay table as JSON.")

    @OptionGroup var input: ImageInput

    @Flag(help: "One line instead of indented JSON.")
    var compact = false

    func run() throws {
        let image = input.open(verification: .full)
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            compact ? [.sortedKeys, .withoutEscapingSlashes] : [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let json = try encoder.encode(MetadataDocument(id: nil, metadata: ImageMetadata(image: image)))
        StandardStreams.write(Array(json), to: STDOUT_FILENO)
        StandardStreams.write("\n", to: STDOUT_FILENO)
    }
}
