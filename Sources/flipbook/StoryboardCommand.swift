import AnimatedImage
import ArgumentParser
import FlipbookService
import FoundationEssentials

/// `flipbook storyboard FILE --tile … --output DIR`: the storyboard's sheets (`0.webp`, …, the
/// bytes the service serves for the same parameters), `storyboard.json` and `storyboard.vtt`
/// (naming the sheets by file name, relative to themselves).
struct StoryboardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storyboard", abstract: "Write a storyboard: sprite sheets, storyboard.json and storyboard.vtt.")

    @OptionGroup var input: ImageInput

    @OptionGroup var output: OutputDirectory

    @Option(help: "The tile's width in pixels.")
    var tile = StoryboardSpec.defaultTileWidth
    @Option(help: "The tile's height in pixels (default: from the image's aspect ratio).")
    var tileHeight: Int?
    @Option(help: "Tiles per row.")
    var columns = StoryboardSpec.defaultColumns
    @Option(help: "all (every frame) or interval=MS (the frame shown every MS milliseconds).")
    var frames = "all"
    @Option(help: "webp (default) or png.")
    var format = "webp"
    @Option(help: "Lossy WebP quality, 1 to 100 (default: lossless).")
    var quality: Int?
    @Option(help: "Most pixels of one sheet (the service's derived.maxSheetPixels).")
    var maxSheetPixels = FlipbookSettings.Derived().maxSheetPixels
    @Option(help: "Largest tile side in pixels (the service's limits.maxOutputDimension).")
    var maxOutputDimension = 4096

    func run() throws {
        var query: [(name: String, value: String)] = [
            ("tile", String(tile)), ("columns", String(columns)), ("frames", frames), ("format", format),
        ]
        if let tileHeight { query.append(("tileHeight", String(tileHeight))) }
        if let quality { query.append(("quality", String(quality))) }
        let spec: StoryboardSpec
        do throws(StoryboardError) {
            spec = try StoryboardQuery.spec(query)
        } catch {
            throw ValidationError(error.detail)
        }
        let image = input.open(verification: .full)
        let layout: StoryboardLayout
        do throws(StoryboardError) {
            layout = try StoryboardLayout(
                spec, canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, timeline: image.timeline,
                maxSheetPixels: maxSheetPixels, maxTiles: input.limits.maxFrames, maxOutputDimension: maxOutputDimension)
        } catch {
            fail(error.detail, status: CLIExit.badImage)
        }
        output.create()
        let name = { (number: Int) in "\(number).\(spec.format.rawValue)" }
        do {
            try StoryboardMaker.make(image, layout: layout) { number, bytes in
                writeFile(bytes, to: output.file(name(number)))
            }
        } catch {
            input.refuse(error)
        }
        let id = URL(fileURLWithPath: input.file).lastPathComponent
        writeFile(StoryboardDocuments.manifest(id: id, layout: layout, sheetURL: name), to: output.file("storyboard.json"))
        writeFile(StoryboardDocuments.vtt(layout: layout, sheetURL: name), to: output.file("storyboard.vtt"))
    }
}
