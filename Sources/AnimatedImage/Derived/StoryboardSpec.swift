/// What a storyboard is asked to be: the tile's width (and height, else from the image's
/// aspect), columns per row, which frames, and the sheets' encoding. Normalised: two requests
/// with the same spec get the same sheets (``key``).
public struct StoryboardSpec: Sendable, Hashable {
    /// Which frames become tiles.
    public enum Frames: Sendable, Hashable {
        /// Every frame, in order.
        case all
        /// The frame shown at every this many milliseconds of one play.
        case interval(Int)
    }

    public static let defaultTileWidth = 160
    public static let defaultColumns = 10

    public var tileWidth: Int
    public var tileHeight: Int?
    public var columns: Int
    public var frames: Frames
    public var format: FrameFormat
    /// Lossy quality 1–100: WebP's (nil = lossless), AVIF's (nil = its default); always nil for PNG.
    public var quality: Int?

    public init(
        tileWidth: Int = StoryboardSpec.defaultTileWidth, tileHeight: Int? = nil,
        columns: Int = StoryboardSpec.defaultColumns, frames: Frames = .all, format: FrameFormat = .webp,
        quality: Int? = nil
    ) {
        self.tileWidth = tileWidth
        self.tileHeight = tileHeight
        self.columns = columns
        self.frames = frames
        self.format = format
        self.quality = format == .png ? nil : quality
    }

    /// A short name of the storyboard for a given tile height: `t160x90-c10-all-webp-ll`,
    /// `t160x90-c5-i500-webp-q75`, `…-png`. Part of file names and ETags.
    public func key(tileHeight: Int) -> String {
        var key = "t\(tileWidth)x\(tileHeight)-c\(columns)-"
        switch frames {
        case .all: key += "all"
        case .interval(let ms): key += "i\(ms)"
        }
        return key + "-" + format.keyPart(quality: quality)
    }
}
