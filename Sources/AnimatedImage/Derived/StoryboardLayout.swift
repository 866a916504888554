/// Where every tile of a storyboard goes: the tile size, the sheets and which frame each tile
/// shows when. Pure arithmetic over the image's canvas and timeline and the request
/// (``StoryboardSpec``); ``StoryboardMaker`` draws it.
///
/// Tiles are laid out in row-major order, `columns` to a row; a sheet holds as many rows as fit
/// within ``maxSheetSide`` pixels (WebP's limit) and `maxSheetPixels`; more rows go to more
/// sheets. A sheet is `min(columns, tiles) × tileWidth` wide.
public struct StoryboardLayout: Sendable, Equatable {
    /// WebP's largest side, which no sheet exceeds (PNG sheets too).
    public static let maxSheetSide = 16383

    /// One tile: frame `index` shown from `startMs` for `durationMs` (on the played timeline),
    /// drawn in sheet `sheet` at (`x`, `y`), `width`×`height` (the tile's cell).
    public struct Tile: Sendable, Equatable, Codable {
        public var index: Int
        public var sheet: Int
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int
        public var startMs: Int
        public var durationMs: Int

        public init(index: Int, sheet: Int, x: Int, y: Int, width: Int, height: Int, startMs: Int, durationMs: Int) {
            (self.index, self.sheet, self.x, self.y) = (index, sheet, x, y)
            (self.width, self.height, self.startMs, self.durationMs) = (width, height, startMs, durationMs)
        }
    }

    /// One sheet's size and the tiles it holds (indices into ``tiles``).
    public struct Sheet: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var tiles: Range<Int>
    }

    public let spec: StoryboardSpec
    public let tileWidth: Int
    public let tileHeight: Int
    public let columns: Int
    /// Rows of a full sheet (the last may have fewer).
    public let rows: Int
    public let durationMs: Int
    public let playCount: Int
    public let tiles: [Tile]
    public let sheets: [Sheet]
    /// How each frame is scaled into its tile: `fit=contain` into the tile, enlarged if need be,
    /// in the sheets' format; the frame is centred in the tile's cell.
    public let tileRendition: FrameRendition

    /// The layout of `spec` for a `canvasWidth`×`canvasHeight` image playing as `timeline`.
    /// - Parameters:
    ///   - maxSheetPixels: the most pixels a sheet may have (`derived.maxSheetPixels`).
    ///   - maxTiles: the most tiles a storyboard may have (`limits.maxFrames`).
    ///   - maxOutputDimension: the largest tile side (`limits.maxOutputDimension`).
    public init(
        _ spec: StoryboardSpec, canvasWidth: Int, canvasHeight: Int, timeline: Timeline, maxSheetPixels: Int,
        maxTiles: Int, maxOutputDimension: Int
    ) throws(StoryboardError) {
        let tileWidth = spec.tileWidth
        let largestTile = min(Self.maxSheetSide, maxOutputDimension)
        // Checked before the height is derived from it: a tile of 17 digits times the canvas's
        // height overflowed and stopped the server.
        guard tileWidth <= largestTile else {
            throw StoryboardError(parameter: "tile", detail: "tile=\(tileWidth) is above the largest tile, \(largestTile) px.")
        }
        let tileHeight = spec.tileHeight ?? max(1, RenditionRequest.roundedQuotient(tileWidth * canvasHeight, canvasWidth))
        guard tileHeight <= largestTile else {
            throw spec.tileHeight == nil
                ? StoryboardError(
                    parameter: "tile",
                    detail: "tile=\(tileWidth) makes tiles \(tileHeight) px high (the image's aspect), above the largest "
                        + "tile, \(largestTile) px.")
                : StoryboardError(
                    parameter: "tileHeight",
                    detail: "tileHeight=\(tileHeight) is above the largest tile, \(largestTile) px.")
        }
        guard spec.columns <= Self.maxSheetSide / tileWidth else {
            throw StoryboardError(
                parameter: "columns",
                detail: "columns=\(spec.columns) of \(tileWidth) px make a sheet wider than \(Self.maxSheetSide) px.")
        }
        let placements = try Self.placements(spec.frames, timeline: timeline, maxTiles: maxTiles)
        let columns = min(spec.columns, placements.count)
        let sheetWidth = columns * tileWidth
        let totalRows = (placements.count + spec.columns - 1) / spec.columns
        let rowsBySide = Self.maxSheetSide / tileHeight
        let rowsByPixels = maxSheetPixels / max(1, sheetWidth * tileHeight)
        let rows = min(totalRows, rowsBySide, rowsByPixels)
        guard rows >= 1 else {
            throw StoryboardError(
                parameter: "derived.maxSheetPixels",
                detail: "A row of \(columns) tiles of \(tileWidth)×\(tileHeight) px is above derived.maxSheetPixels "
                    + "(\(maxSheetPixels)); ask for fewer columns or smaller tiles.")
        }
        var tiles: [Tile] = []
        tiles.reserveCapacity(placements.count)
        for (n, placement) in placements.enumerated() {
            let row = n / spec.columns
            tiles.append(
                Tile(
                    index: placement.index, sheet: row / rows, x: (n % spec.columns) * tileWidth,
                    y: (row % rows) * tileHeight, width: tileWidth, height: tileHeight, startMs: placement.startMs,
                    durationMs: placement.durationMs))
        }
        let tilesPerSheet = rows * spec.columns
        var sheets: [Sheet] = []
        var first = 0
        while first < tiles.count {
            let end = min(tiles.count, first + tilesPerSheet)
            let sheetRows = (end - first + spec.columns - 1) / spec.columns
            sheets.append(Sheet(width: sheetWidth, height: sheetRows * tileHeight, tiles: first..<end))
            first = end
        }
        let request = RenditionRequest(
            width: tileWidth, height: tileHeight, fit: .contain, enlarge: true, format: spec.format, quality: spec.quality)
        do {
            tileRendition = try request.rendition(
                canvasWidth: canvasWidth, canvasHeight: canvasHeight, maxOutputDimension: largestTile)
        } catch {
            throw StoryboardError(parameter: "tile", detail: "\(error).")
        }
        self.spec = spec
        self.tileWidth = tileWidth
        self.tileHeight = tileHeight
        self.columns = spec.columns
        self.rows = rows
        self.durationMs = timeline.durationMs
        self.playCount = timeline.playCount
        self.tiles = tiles
        self.sheets = sheets
    }

    /// Where the frame sits in its tile's cell: centred (left and top rounded down).
    public var frameOffset: (x: Int, y: Int) {
        ((tileWidth - tileRendition.outputWidth) / 2, (tileHeight - tileRendition.outputHeight) / 2)
    }

    private struct Placement {
        var index: Int
        var startMs: Int
        var durationMs: Int
    }

    /// Which frame each tile shows, and when: every frame (its timestamp and effective delay),
    /// or the frame shown at every `interval` ms of one play (at least one tile).
    private static func placements(_ frames: StoryboardSpec.Frames, timeline: Timeline, maxTiles: Int)
        throws(StoryboardError) -> [Placement]
    {
        switch frames {
        case .all:
            guard timeline.delaysMs.count <= maxTiles else {
                throw StoryboardError(
                    parameter: "frames", detail: "The image has more frames than a storyboard may have tiles (\(maxTiles)).")
            }
            return timeline.delaysMs.indices.map {
                Placement(index: $0, startMs: timeline.timestampsMs[$0], durationMs: timeline.delaysMs[$0])
            }
        case .interval(let ms):
            let duration = max(1, timeline.durationMs)
            let count = (duration + ms - 1) / ms
            guard count <= maxTiles else {
                throw StoryboardError(
                    parameter: "frames",
                    detail: "frames=interval=\(ms) makes \(count) tiles, more than a storyboard may have (\(maxTiles)).")
            }
            return (0..<count).map { n in
                let start = n * ms
                return Placement(
                    index: timeline.frameIndex(atMs: start), startMs: start, durationMs: min(ms, duration - start))
            }
        }
    }
}

/// A storyboard request that cannot be laid out: which parameter (or setting) and why.
public typealias StoryboardError = ParameterError
