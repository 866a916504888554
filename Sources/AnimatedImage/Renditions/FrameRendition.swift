/// One way of serving an image's frames, normalised to what it produces: the size the composited
/// canvas is scaled to, the part of that kept (a `cover` crop), and the encoding. Two requests
/// that produce the same bytes are the same rendition, whatever parameters they spelled it with
/// (``RenditionRequest/rendition(canvasWidth:canvasHeight:maxOutputDimension:)``), so they share
/// one cache entry and one ETag.
public struct FrameRendition: Sendable, Hashable {
    /// The canvas is scaled to this size (the canvas's own size: not scaled).
    public var scaledWidth: Int
    public var scaledHeight: Int
    /// The part of the scaled frame served (nil: all of it).
    public var crop: PixelRect?
    public var format: FrameFormat
    /// Lossy quality, 1–100: WebP's (nil = lossless), AVIF's (always given: AVIF frames are
    /// lossy); nil for PNG.
    public var quality: Int?

    public init(scaledWidth: Int, scaledHeight: Int, crop: PixelRect? = nil, format: FrameFormat, quality: Int? = nil) {
        self.scaledWidth = scaledWidth
        self.scaledHeight = scaledHeight
        self.crop = crop
        self.format = format
        self.quality = format == .png ? nil : quality
    }

    /// Today's frame: full size, PNG. `exact(width:height:)` with the canvas's size.
    public static func exact(width: Int, height: Int) -> FrameRendition {
        FrameRendition(scaledWidth: width, scaledHeight: height, format: .png)
    }

    /// The served frame's width and height.
    public var outputWidth: Int { crop?.width ?? scaledWidth }
    public var outputHeight: Int { crop?.height ?? scaledHeight }

    /// Whether frames of a `width`×`height` canvas are scaled at all.
    public func scales(width: Int, height: Int) -> Bool { scaledWidth != width || scaledHeight != height }

    /// True for the full-size PNG of a `width`×`height` canvas: the frame as served without
    /// parameters, byte for byte.
    public func isExact(width: Int, height: Int) -> Bool {
        !scales(width: width, height: height) && crop == nil && format == .png
    }

    /// A short name of the rendition, unique per canvas: `320x180-png`, `320x180-webp-ll`
    /// (lossless), `320x180-webp-q80`, `320x180-avif-q44`, and with a crop `400x300+40+0-320x300-webp-q80` (scaled
    /// size, crop origin, crop size). Part of cache keys and ETags.
    public var key: String {
        var key = "\(scaledWidth)x\(scaledHeight)"
        if let crop { key += "+\(crop.x)+\(crop.y)-\(crop.width)x\(crop.height)" }
        return key + "-" + format.keyPart(quality: quality)
    }

    /// The rendition `text` names, when it is a ``key`` exactly as ``key`` writes it (digits
    /// without leading zeros, a quality from 1 to 100, a crop inside the scaled size); nil
    /// otherwise. A client that read a key (from a frame's `ETag` or `GET /images/{id}/cache`)
    /// names the rendition with it again, with no `Accept` or preset left to resolve.
    public init?(key text: Substring) {
        var scanner = KeyScanner(text: text)
        guard let width = scanner.number(), scanner.take("x"), let height = scanner.number(), width > 0, height > 0
        else { return nil }
        var crop: PixelRect? = nil
        if scanner.take("+") {
            guard let x = scanner.number(), scanner.take("+"), let y = scanner.number(), scanner.take("-"),
                let cropWidth = scanner.number(), scanner.take("x"), let cropHeight = scanner.number(),
                cropWidth > 0, cropHeight > 0, x + cropWidth <= width, y + cropHeight <= height
            else { return nil }
            crop = PixelRect(x: x, y: y, width: cropWidth, height: cropHeight)
        }
        guard scanner.take("-") else { return nil }
        let encoding = scanner.rest
        let format: FrameFormat
        var quality: Int? = nil
        if encoding == "png" {
            format = .png
        } else if encoding == "webp-ll" {
            format = .webp
        } else if encoding.hasPrefix("webp-q"), let q = Int(encoding.dropFirst(6)), (1...100).contains(q) {
            (format, quality) = (.webp, q)
        } else if encoding.hasPrefix("avif-q"), let q = Int(encoding.dropFirst(6)), (1...100).contains(q) {
            (format, quality) = (.avif, q)
        } else {
            return nil
        }
        self.init(scaledWidth: width, scaledHeight: height, crop: crop, format: format, quality: quality)
        guard key == text else { return nil }  // leading zeros, `+`-signed qualities: not as ``key`` writes them
    }
}

/// Reads a rendition key from the left: decimal numbers (at most 9 digits) and single characters.
private struct KeyScanner {
    var rest: Substring

    init(text: Substring) { rest = text }

    mutating func take(_ character: Character) -> Bool {
        guard rest.first == character else { return false }
        rest = rest.dropFirst()
        return true
    }

    mutating func number() -> Int? {
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 9 else { return nil }
        rest = rest.dropFirst(digits.count)
        return Int(digits)
    }
}

/// The encodings frames are served in: PNG, WebP (lossless or lossy), AVIF (lossy, only when
/// asked for by name).
public enum FrameFormat: String, Sendable, Hashable, CaseIterable {
    case png
    case webp
    case avif

    /// The encoding's part of a rendition's or a storyboard's key: `png`, `webp-ll` (lossless),
    /// `webp-q80`, `avif-q44` (with no quality, AVIF's default: what it is encoded at).
    func keyPart(quality: Int?) -> String {
        switch (self, quality) {
        case (.png, _): "png"
        case (.webp, nil): "webp-ll"
        case (.webp, let q?): "webp-q\(q)"
        case (.avif, let q): "avif-q\(q ?? AVIFFrameEncoder.defaultQuality)"
        }
    }

    public var mimeType: String {
        switch self {
        case .png: return "image/png"
        case .webp: return "image/webp"
        case .avif: return "image/avif"
        }
    }
}
