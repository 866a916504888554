/// What a client asked a frame to look like — the rendition parameters of the frame routes and
/// the CLI — and the size rule that turns it, for a given canvas, into a ``FrameRendition``.
///
/// The size rule (`round` is to nearest, halves away from zero), for a `w`×`h` canvas, with
/// `tw = round(width × dpr)` and `th = round(height × dpr)` for the dimensions given:
/// - ``Fit/contain``: `s` = the smaller of `tw/w` and `th/h` (1 when neither is given), at most
///   1 unless `enlarge`; the frame becomes `max(1, round(w·s)) × max(1, round(h·s))`.
/// - ``Fit/cover`` (both given): `s = max(tw/w, th/h)`, at most 1 unless `enlarge`; scaled as
///   for contain, then the centre `min(tw, scaled width) × min(th, scaled height)` is kept, its
///   left and top at `floor((scaled − crop) / 2)`.
/// - ``Fit/fill`` (both given): `tw/w` and `th/h` on their own axes, each at most 1 unless
///   `enlarge`; `max(1, round(w·sx)) × max(1, round(h·sy))`.
/// A `tw` or `th` above the output limit is refused, and so is a result larger than it on
/// either side (an enlarged one-sided contain of a very narrow canvas).
/// All of it in integers: no floating-point rounding decides a pixel.
public struct RenditionRequest: Sendable, Hashable {
    /// How the frame is fitted to the requested box.
    public enum Fit: String, Sendable, Hashable, CaseIterable {
        case contain, cover, fill
    }

    /// CSS pixels (positive).
    public var width: Int?
    public var height: Int?
    public var dpr: DevicePixelRatio
    public var fit: Fit
    public var enlarge: Bool
    public var format: FrameFormat
    /// Lossy WebP quality 1–100; nil = lossless.
    public var quality: Int?

    public init(
        width: Int? = nil, height: Int? = nil, dpr: DevicePixelRatio = .one, fit: Fit = .contain,
        enlarge: Bool = false, format: FrameFormat = .png, quality: Int? = nil
    ) {
        self.width = width
        self.height = height
        self.dpr = dpr
        self.fit = fit
        self.enlarge = enlarge
        self.format = format
        self.quality = quality
    }

    /// Today's frame: no scaling, PNG.
    public static let full = RenditionRequest()

    /// Whether this is ``full``: the defaults of ``init(width:height:dpr:fit:enlarge:format:quality:)``
    /// compared field by field in place (`== .full` copied both values and checked the static's
    /// initialization, on every frame request).
    @inlinable public var isFull: Bool {
        width == nil && height == nil && dpr.numerator == 1 && dpr.denominator == 1 && fit == .contain
            && !enlarge && format == .png && quality == nil
    }

    /// The target box in device pixels: `round(width × dpr)`, `round(height × dpr)`.
    public func targetBox(maxOutputDimension: Int) throws(RenditionError) -> (width: Int?, height: Int?) {
        func device(_ css: Int?) throws(RenditionError) -> Int? {
            guard let css else { return nil }
            // dpr ≥ 1, so a CSS size above the limit is above it in device pixels too (and the
            // product below cannot overflow).
            guard css <= maxOutputDimension else { throw .outputTooLarge(css, limit: maxOutputDimension) }
            let pixels = Self.roundedQuotient(css * dpr.numerator, dpr.denominator)
            guard pixels <= maxOutputDimension else { throw .outputTooLarge(pixels, limit: maxOutputDimension) }
            return pixels
        }
        return (try device(width), try device(height))
    }

    /// The rendition this request makes of a `w`×`h` canvas (the size rule above).
    public func rendition(canvasWidth w: Int, canvasHeight h: Int, maxOutputDimension: Int) throws(RenditionError)
        -> FrameRendition
    {
        let (tw, th) = try targetBox(maxOutputDimension: maxOutputDimension)
        let one = Ratio(1, 1)
        var scaled: (Int, Int)
        var crop: PixelRect? = nil
        switch fit {
        case .contain:
            var s = [tw.map { Ratio($0, w) }, th.map { Ratio($0, h) }].compactMap { $0 }.min() ?? one
            if !enlarge { s = min(s, one) }
            scaled = (s.scaled(w), s.scaled(h))
        case .cover:
            guard let tw, let th else { throw .coverNeedsBoth(fit) }
            var s = max(Ratio(tw, w), Ratio(th, h))
            if !enlarge { s = min(s, one) }
            scaled = (s.scaled(w), s.scaled(h))
            let size = (min(tw, scaled.0), min(th, scaled.1))
            if size != scaled {
                crop = PixelRect(x: (scaled.0 - size.0) / 2, y: (scaled.1 - size.1) / 2, width: size.0, height: size.1)
            }
        case .fill:
            guard let tw, let th else { throw .coverNeedsBoth(fit) }
            let sx = enlarge ? Ratio(tw, w) : min(Ratio(tw, w), one)
            let sy = enlarge ? Ratio(th, h) : min(Ratio(th, h), one)
            scaled = (sx.scaled(w), sy.scaled(h))
        }
        let largest = max(crop?.width ?? scaled.0, crop?.height ?? scaled.1)
        guard largest <= maxOutputDimension else { throw .outputTooLarge(largest, limit: maxOutputDimension) }
        return FrameRendition(scaledWidth: scaled.0, scaledHeight: scaled.1, crop: crop, format: format, quality: quality)
    }

    /// `round(n / d)`, halves away from zero, for n ≥ 0 and d > 0.
    static func roundedQuotient(_ n: Int, _ d: Int) -> Int { (2 * n + d) / (2 * d) }

    /// A non-negative rational number, compared without rounding.
    struct Ratio: Comparable {
        let n: Int
        let d: Int
        init(_ n: Int, _ d: Int) {
            self.n = n
            self.d = max(1, d)
        }
        static func < (a: Ratio, b: Ratio) -> Bool { a.n * b.d < b.n * a.d }
        static func == (a: Ratio, b: Ratio) -> Bool { a.n * b.d == b.n * a.d }
        /// `max(1, round(side × self))`.
        func scaled(_ side: Int) -> Int { max(1, RenditionRequest.roundedQuotient(side * n, d)) }
    }
}

/// A device pixel ratio from 1 to 4, kept as the decimal it was written as (`1.5` = 15/10), so
/// `round(width × dpr)` is exact.
public struct DevicePixelRatio: Sendable, Hashable, CustomStringConvertible {
    public let numerator: Int
    public let denominator: Int

    public static let one = DevicePixelRatio(numerator: 1, denominator: 1)
    /// The most fraction digits accepted.
    public static let maxFractionDigits = 6

    private init(numerator: Int, denominator: Int) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// Digits with an optional fraction (`2`, `1.5`, `2.625`), between 1 and 4; nil otherwise.
    public init?(decimal text: Substring) {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let fraction = parts.count == 2 ? parts[1] : ""
        guard !whole.isEmpty, whole.utf8.count <= 1, parts.count == 1 || !fraction.isEmpty,
            fraction.utf8.count <= Self.maxFractionDigits,
            (whole + fraction).utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let digits = Int(whole + fraction)
        else { return nil }
        var denominator = 1
        for _ in 0..<fraction.utf8.count { denominator *= 10 }
        guard digits >= denominator, digits <= 4 * denominator else { return nil }
        self.init(numerator: digits, denominator: denominator)
    }

    public var description: String {
        guard denominator > 1 else { return String(numerator) }
        var fraction = String(numerator % denominator)
        let digits = String(denominator).count - 1
        fraction = String(repeating: "0", count: digits - fraction.count) + fraction
        return "\(numerator / denominator).\(fraction)"
    }
}

/// Why a rendition cannot be made of an image.
public enum RenditionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A requested dimension (in device pixels), or the result, is above `limits.maxOutputDimension`.
    case outputTooLarge(Int, limit: Int)
    /// `cover` and `fill` need both `width` and `height`.
    case coverNeedsBoth(RenditionRequest.Fit)

    public var description: String {
        switch self {
        case .outputTooLarge(let pixels, let limit):
            return "the rendition would be \(pixels) pixels on a side, above limits.maxOutputDimension (\(limit))"
        case .coverNeedsBoth(let fit):
            return "fit=\(fit.rawValue) needs both width and height"
        }
    }
}
