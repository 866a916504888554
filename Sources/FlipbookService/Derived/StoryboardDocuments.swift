import AnimatedImage

/// The two descriptions of a storyboard a client reads: the JSON manifest (the field names of
/// the contract: `id`, `tileWidth`, `tileHeight`, `columns`, `rows`, `durationMs`, `playCount`,
/// `sheets[{url, width, height}]`, `tiles[{index, sheet, x, y, width, height, startMs,
/// durationMs}]`) and the WebVTT track (one cue per tile, `start --> end`, text
/// `URL#xywh=x,y,w,h` with the sheet's URL relative to the track's).
public enum StoryboardDocuments {
    /// The sheets' URL path: `/derived/<sha256>/<storyboard>/<n>.<format>`.
    static func sheetPath(_ sha256: String, _ layout: StoryboardLayout, _ number: Int) -> String {
        "/derived/\(sha256)/\(DerivedProducts.storyboardName(layout))/\(DerivedProducts.sheetName(number, layout.spec.format))"
    }

    private struct Manifest: Encodable {
        struct Sheet: Encodable {
            var url: String
            var width: Int
            var height: Int
        }
        var id: String
        var tileWidth: Int
        var tileHeight: Int
        var columns: Int
        var rows: Int
        var durationMs: Int
        var playCount: Int
        var sheets: [Sheet]
        var tiles: [StoryboardLayout.Tile]
    }

    /// The manifest of `layout` for image `id` (content `sha256`).
    static func manifest(id: String, sha256: String, layout: StoryboardLayout) -> [UInt8] {
        manifest(id: id, layout: layout) { sheetPath(sha256, layout, $0) }
    }

    /// The manifest of `layout` for image `id`, sheet `n` at `sheetURL(n)` (the CLI's are files).
    public static func manifest(id: String, layout: StoryboardLayout, sheetURL: (Int) -> String) -> [UInt8] {
        let sheets = layout.sheets.enumerated().map { number, sheet in
            Manifest.Sheet(url: sheetURL(number), width: sheet.width, height: sheet.height)
        }
        return JSONBody.encode(
            Manifest(
                id: id, tileWidth: layout.tileWidth, tileHeight: layout.tileHeight, columns: layout.columns,
                rows: layout.rows, durationMs: layout.durationMs, playCount: layout.playCount, sheets: sheets,
                tiles: layout.tiles))
    }

    /// The WebVTT track of `layout`, served at `/images/{id}/storyboard.vtt`: the sheets' URLs are
    /// relative to it (`../../derived/…`).
    static func vtt(sha256: String, layout: StoryboardLayout) -> [UInt8] {
        vtt(layout: layout) { ".." + "/.." + sheetPath(sha256, layout, $0) }
    }

    /// The WebVTT track of `layout`, sheet `n` at `sheetURL(n)` relative to the track.
    public static func vtt(layout: StoryboardLayout, sheetURL: (Int) -> String) -> [UInt8] {
        var text = "WEBVTT\n"
        for tile in layout.tiles {
            let url = sheetURL(tile.sheet)
            text += "\n\(timestamp(tile.startMs)) --> \(timestamp(tile.startMs + tile.durationMs))\n"
            text += "\(url)#xywh=\(tile.x),\(tile.y),\(tile.width),\(tile.height)\n"
        }
        return Array(text.utf8)
    }

    /// `hh:mm:ss.ttt`.
    static func timestamp(_ ms: Int) -> String {
        func pad(_ value: Int, _ digits: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, digits - text.count)) + text
        }
        return "\(pad(ms / 3_600_000, 2)):\(pad(ms / 60_000 % 60, 2)):\(pad(ms / 1000 % 60, 2)).\(pad(ms % 1000, 3))"
    }
}
