import AnimatedImage

/// The parameters of `GET /images/{id}/storyboard` and `…/storyboard.vtt`: `tile` (the tile's
/// width in pixels, default 160), `tileHeight` (default: from the image's aspect), `columns`
/// (default 10), `frames` (`all`, default, or `interval=MS`), and the sheets' `format` (`webp`,
/// default, or `png`) and `quality` (1–100, lossy WebP; absent: lossless), which are rendition
/// parameters read by ``RenditionQuery`` with its rules. Strict: a malformed value, a parameter
/// given twice, or `quality` with PNG is an error naming the parameter. Other parameters are
/// ignored.
public enum StoryboardQuery {
    static let parameterNames: Set<String> = ["tile", "tileHeight", "columns", "frames", "format", "quality"]

    /// The storyboard `query` asks for.
    public static func spec(_ query: [(name: String, value: String)]) throws(StoryboardError) -> StoryboardSpec {
        var seen: Set<String> = []
        var spec = StoryboardSpec()
        var sheets = RenditionQuery()
        for (name, value) in query where parameterNames.contains(name) {
            guard seen.insert(name).inserted else {
                throw StoryboardError(parameter: name, detail: "\(name) is given more than once.")
            }
            func fail(_ what: String) -> StoryboardError {
                StoryboardError(parameter: name, detail: "\(name)='\(RenditionQuery.shown(value))' is not \(what).")
            }
            switch name {
            case "tile", "tileHeight", "columns":
                guard let number = RenditionQuery.positiveInteger(value) else { throw fail("a positive integer") }
                if name == "tile" { spec.tileWidth = number }
                if name == "tileHeight" { spec.tileHeight = number }
                if name == "columns" { spec.columns = number }
            case "frames":
                if value == "all" {
                    spec.frames = .all
                } else if value.hasPrefix("interval="),
                    let ms = RenditionQuery.positiveInteger(String(value.dropFirst("interval=".count))),
                    ms < 1_000_000_000
                {
                    spec.frames = .interval(ms)
                } else {
                    throw fail("all or interval=MS (MS a positive number of milliseconds)")
                }
            default:
                try sheets.set(name, value, formats: [.webp, .png])
            }
        }
        let format: FrameFormat = sheets.format == .png ? .png : .webp
        try RenditionQuery.checkQuality(sheets.quality, format: sheets.format ?? .webp, of: "lossy WebP sheets")
        spec.format = format
        spec.quality = format == .webp ? sheets.quality : nil
        // Larger than any sheet allows; the layout names the limit for the rest.
        if spec.columns > StoryboardLayout.maxSheetSide {
            throw StoryboardError(parameter: "columns", detail: "columns=\(spec.columns) is more than a sheet can hold.")
        }
        return spec
    }
}
