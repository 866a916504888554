import AnimatedImage

/// The rendition parameters (`width`, `height`, `dpr`, `fit`, `enlarge`, `format`, `quality`),
/// as given: each checked on its own, none yet applied to an image. The one parser of them —
/// for frames, previews (``RenditionPolicy``), storyboards' sheets (``StoryboardQuery``, its
/// `format` and `quality`) and the command line's flags — so each rule, and the words of its
/// error, is written once. A preset is one of these too. Parsing is strict: a malformed or
/// out-of-range value, or a parameter given twice, is a ``RenditionParameterError`` naming it.
public struct RenditionQuery: Sendable, Equatable {
    /// `format`: a frame format, or `auto` (negotiated by `Accept`: PNG or WebP, never AVIF).
    public enum Format: String, Sendable, Equatable, CaseIterable {
        case png, webp, avif, auto
    }

    var width: Int?
    var height: Int?
    var dpr: DevicePixelRatio?
    var fit: RenditionRequest.Fit?
    var enlarge: Bool?
    var format: Format?
    var quality: Int?

    /// Whether `name` is a query parameter the frame routes read for renditions (`r` names a
    /// preset): compared as short strings, not hashed (this runs on every frame hit).
    static func isParameter(_ name: String) -> Bool {
        switch name {
        case "width", "height", "dpr", "fit", "enlarge", "format", "quality", "r": return true
        default: return false
        }
    }

    /// Nothing given.
    var isEmpty: Bool { self == RenditionQuery() }

    /// `self` with every parameter `other` gives put over it (explicit parameters over a preset's).
    func overlaid(by other: RenditionQuery) -> RenditionQuery {
        RenditionQuery(
            width: other.width ?? width, height: other.height ?? height, dpr: other.dpr ?? dpr,
            fit: other.fit ?? fit, enlarge: other.enlarge ?? enlarge, format: other.format ?? format,
            quality: other.quality ?? quality)
    }

    /// Sets the parameter `name` from `value`, `format` being one of `formats`; names that are not
    /// rendition parameters (and `r`) are left to the caller.
    mutating func set(_ name: String, _ value: String, formats: [Format] = Format.allCases) throws(RenditionParameterError) {
        func fail(_ what: String) -> RenditionParameterError {
            RenditionParameterError(parameter: name, detail: "\(name)='\(Self.shown(value))' is not \(what).")
        }
        func once<T>(_ current: T?) throws(RenditionParameterError) {
            if current != nil {
                throw RenditionParameterError(parameter: name, detail: "\(name) is given more than once.")
            }
        }
        switch name {
        case "width", "height":
            try once(name == "width" ? width : height)
            guard let pixels = Self.positiveInteger(value) else { throw fail("a positive integer (CSS pixels)") }
            if name == "width" { width = pixels } else { height = pixels }
        case "dpr":
            try once(dpr)
            guard let ratio = DevicePixelRatio(decimal: Substring(value)) else {
                throw fail("a decimal number from 1 to 4 (at most \(DevicePixelRatio.maxFractionDigits) decimals)")
            }
            dpr = ratio
        case "fit":
            try once(fit)
            guard let mode = RenditionRequest.Fit(rawValue: value) else { throw fail("contain, cover or fill") }
            fit = mode
        case "enlarge":
            try once(enlarge)
            switch value {
            case "true": enlarge = true
            case "false": enlarge = false
            default: throw fail("true or false")
            }
        case "format":
            try once(format)
            guard let chosen = Format(rawValue: value), formats.contains(chosen) else {
                throw fail(Self.alternatives(formats.map(\.rawValue)))
            }
            format = chosen
        case "quality":
            try once(quality)
            guard let q = Self.positiveInteger(value), q <= 100 else { throw fail("an integer from 1 to 100") }
            quality = q
        default:
            break
        }
    }

    /// The rule of `quality` wherever it is given: it sets lossy WebP's (or AVIF's) quality, so it
    /// cannot go with PNG (`what` names the output in the error: frames, or a storyboard's sheets).
    static func checkQuality(_ quality: Int?, format: Format, of what: String = "lossy WebP") throws(RenditionParameterError) {
        if quality != nil && format == .png {
            throw RenditionParameterError(
                parameter: "quality", detail: "quality applies to \(what); it cannot be given with format=png.")
        }
    }

    /// `a`, `a or b`, `a, b or c`.
    static func alternatives(_ words: [String]) -> String {
        words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " or " + words.last!
    }

    /// Parses a preset's query, `width=160&format=webp&quality=75` (no `r`, no percent-encoding).
    static func preset(_ text: Substring) throws(RenditionParameterError) -> RenditionQuery {
        var query = RenditionQuery()
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            guard isParameter(name), name != "r", parts.count == 2 else {
                throw RenditionParameterError(parameter: name, detail: "'\(pair)' is not a rendition parameter.")
            }
            try query.set(name, String(parts[1]))
        }
        return query
    }

    /// Decimal digits only, no sign, at least 1. Longer numbers than `Int` holds count as 10^18:
    /// they are sizes above any limit (refused as such), not malformed.
    static func positiveInteger(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let digits = text.drop { $0 == "0" }
        guard !digits.isEmpty else { return nil }
        return digits.utf8.count > 18 ? 1_000_000_000_000_000_000 : Int(digits)
    }

    /// A value as quoted back in a problem's detail: at most 40 characters.
    static func shown(_ value: String) -> String {
        value.count <= 40 ? value : String(value.prefix(40)) + "…"
    }
}

/// A rendition parameter that cannot be served: which one and why (a 400 problem's detail).
public typealias RenditionParameterError = ParameterError
