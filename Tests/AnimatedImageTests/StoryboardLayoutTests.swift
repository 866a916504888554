import AnimatedImage
import FlipbookTestSupport
import Testing

/// Storyboard layouts: every `frames`/`columns` combination keeps tiles in row-major order on
/// the played timeline within the sheets, sheets split at the side and pixel limits, invalid
/// requests name their parameter, and the tiles of drawn sheets are the rendition frames.
@Suite("Storyboard layout")
struct StoryboardLayoutTests {
    static let iss634 = "pillow/gif/iss634.gif"  // 245×245, 42 frames

    static func layout(
        _ spec: StoryboardSpec, timeline: Timeline, width: Int = 245, height: Int = 245, maxSheetPixels: Int = 16_777_216
    ) throws(StoryboardError) -> StoryboardLayout {
        try StoryboardLayout(
            spec, canvasWidth: width, canvasHeight: height, timeline: timeline, maxSheetPixels: maxSheetPixels,
            maxTiles: 10_000, maxOutputDimension: 4096)
    }

    @Test func defaultsAreOneSheetOfTenColumns() throws {
        let image = try AnimatedImage(bytes: Corpus.bytes(Self.iss634))
        let layout = try Self.layout(StoryboardSpec(), timeline: image.timeline)
        #expect((layout.tileWidth, layout.tileHeight, layout.columns, layout.rows) == (160, 160, 10, 5))
        #expect(layout.sheets.count == 1)
        #expect((layout.sheets[0].width, layout.sheets[0].height) == (1600, 800))
        #expect(layout.tiles.count == 42)
        #expect(
            layout.tiles[13]
                == .init(
                    index: 13, sheet: 0, x: 480, y: 160, width: 160, height: 160,
                    startMs: image.timeline.timestampsMs[13], durationMs: image.timeline.delaysMs[13]))
        #expect(layout.durationMs == image.timeline.durationMs && layout.playCount == image.timeline.playCount)
    }

    @Test(
        arguments: [1, 3, 10, 64], [StoryboardSpec.Frames.all, .interval(1), .interval(100), .interval(1000), .interval(100_000)])
    func everyFramesAndColumnsCombination(columns: Int, frames: StoryboardSpec.Frames) throws {
        let timeline = Timeline(rawDelaysMs: [40, 0, 130, 70, 20, 10, 250, 90, 60], playCount: 2)
        let spec = StoryboardSpec(tileWidth: 64, tileHeight: 36, columns: columns, frames: frames)
        let layout = try Self.layout(spec, timeline: timeline, width: 320, height: 180, maxSheetPixels: 64 * 36 * 3 * 64)
        let expectedCount: Int
        switch frames {
        case .all: expectedCount = 9
        case .interval(let ms): expectedCount = (timeline.durationMs + ms - 1) / ms
        }
        #expect(layout.tiles.count == expectedCount)
        var time = 0
        for (n, tile) in layout.tiles.enumerated() {
            #expect(tile.startMs == time, "tile \(n)")
            time += tile.durationMs
            #expect(tile.index == timeline.frameIndex(atMs: tile.startMs))
            let row = n / columns
            #expect(tile.x == (n % columns) * 64 && tile.y == (row % layout.rows) * 36 && tile.sheet == row / layout.rows)
            let sheet = layout.sheets[tile.sheet]
            #expect(tile.x + tile.width <= sheet.width && tile.y + tile.height <= sheet.height)
            #expect(sheet.tiles.contains(n))
        }
        #expect(time == timeline.durationMs)
        for sheet in layout.sheets {
            #expect(sheet.width <= StoryboardLayout.maxSheetSide && sheet.height <= StoryboardLayout.maxSheetSide)
            #expect(sheet.width * sheet.height <= 64 * 36 * 3 * 64)
        }
    }

    @Test func sheetsSplitAtThePixelLimit() throws {
        let timeline = Timeline(rawDelaysMs: Array(repeating: 50, count: 7), playCount: 0)
        let spec = StoryboardSpec(tileWidth: 100, tileHeight: 100, columns: 2)
        let layout = try Self.layout(spec, timeline: timeline, width: 100, height: 100, maxSheetPixels: 2 * 100 * 100 * 3)
        #expect(layout.rows == 3)
        #expect(layout.sheets.map { [$0.width, $0.height] } == [[200, 300], [200, 100]])
        #expect(layout.tiles[6].sheet == 1 && layout.tiles[6].y == 0 && layout.tiles[5].y == 200)
        // One pixel less: two rows a sheet.
        let smaller = try Self.layout(spec, timeline: timeline, width: 100, height: 100, maxSheetPixels: 2 * 100 * 100 * 3 - 1)
        #expect(smaller.sheets.map(\.height) == [200, 200] && smaller.rows == 2)
    }

    @Test func sheetsSplitAtWebPsLargestSide() throws {
        let timeline = Timeline(rawDelaysMs: Array(repeating: 50, count: 10), playCount: 0)
        let spec = StoryboardSpec(tileWidth: 16, tileHeight: 4000, columns: 1)
        let layout = try Self.layout(spec, timeline: timeline, width: 4, height: 1000, maxSheetPixels: 1 << 30)
        #expect(layout.sheets.map(\.height) == [16000, 16000, 8000])
    }

    @Test func invalidRequestsNameTheirParameter() throws {
        let timeline = Timeline(rawDelaysMs: [50, 50], playCount: 0)
        func refusal(_ spec: StoryboardSpec, maxSheetPixels: Int = 16_777_216) -> String? {
            do {
                _ = try Self.layout(spec, timeline: timeline, maxSheetPixels: maxSheetPixels)
                return nil
            } catch {
                return error.parameter
            }
        }
        #expect(refusal(StoryboardSpec(tileWidth: 160, columns: 103)) == "columns")
        #expect(refusal(StoryboardSpec(tileWidth: 5000)) == "tile")
        // Numbers as large as a query may give: refused by name, never an overflow (a tile of
        // 55702705535802000 px once stopped the server).
        #expect(refusal(StoryboardSpec(tileWidth: 55_702_705_535_802_000, columns: 2)) == "tile")
        #expect(refusal(StoryboardSpec(tileWidth: Int.max / 2)) == "tile")
        #expect(refusal(StoryboardSpec(tileWidth: 100, tileHeight: Int.max / 2)) == "tileHeight")
        #expect(refusal(StoryboardSpec(tileWidth: 100, columns: 16383)) == "columns")
        #expect(refusal(StoryboardSpec(tileWidth: 100, columns: Int.max / 2)) == "columns")
        #expect(refusal(StoryboardSpec(tileWidth: 100, tileHeight: 5000)) == "tileHeight")
        #expect(refusal(StoryboardSpec(tileWidth: 100), maxSheetPixels: 100) == "derived.maxSheetPixels")
        #expect(
            throws: StoryboardError.self,
            performing: {
                try StoryboardLayout(
                    StoryboardSpec(frames: .interval(1)), canvasWidth: 10, canvasHeight: 10,
                    timeline: Timeline(rawDelaysMs: [60_000], playCount: 0), maxSheetPixels: 1 << 24, maxTiles: 100,
                    maxOutputDimension: 4096)
            })
    }

    @Test func tilesOfAPNGSheetAreTheRenditionFrames() throws {
        let image = try AnimatedImage(bytes: Corpus.bytes(Self.iss634))
        let spec = StoryboardSpec(tileWidth: 50, tileHeight: 40, columns: 7, format: .png)
        let layout = try Self.layout(spec, timeline: image.timeline, maxSheetPixels: 350 * 40 * 4)
        #expect(layout.sheets.count == 2)
        var sheets: [Canvas] = []
        try StoryboardMaker.make(image, layout: layout) { number, bytes in
            #expect(number == sheets.count)
            sheets.append(try FrameRenderer(image: AnimatedImage(bytes: bytes)).render(0))
        }
        let renderer = FrameRenderer(image: image)
        let rendition = try RenditionRequest(width: 50, height: 40, enlarge: true).rendition(
            canvasWidth: 245, canvasHeight: 245, maxOutputDimension: 4096)
        #expect((rendition.outputWidth, rendition.outputHeight) == (40, 40) && layout.frameOffset == (5, 0))
        for tile in layout.tiles {
            let frame = try RenditionEncoder.pixels(renderer.render(tile.index), as: rendition)
            let sheet = sheets[tile.sheet]
            for y in 0..<40 {
                for x in 0..<50 {
                    let at = ((tile.y + y) * sheet.width + tile.x + x) * 4
                    let pixel = Array(sheet.pixels[at..<at + 4])
                    if x < 5 || x >= 45 {
                        #expect(pixel[3] == 0, "tile \(tile.index) border")
                    } else {
                        let from = (y * 40 + x - 5) * 4
                        let expected = Array(frame.pixels[from..<from + 4])
                        #expect(pixel == expected || (pixel[3] == 0 && expected[3] == 0), "tile \(tile.index) (\(x), \(y))")
                    }
                }
            }
        }
    }
}
