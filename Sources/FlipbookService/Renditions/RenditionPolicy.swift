import AnimatedImage

/// The service's rules for renditions, from its settings: the default format, the presets,
/// whether arbitrary parameters are allowed, the output limit. It turns a frame request's query
/// and `Accept` field into a ``RequestedRendition``, and that, for an image's canvas, into the
/// ``FrameRendition`` the cache makes.
public struct RenditionPolicy: Sendable {
    public let defaultFormat: RenditionQuery.Format
    public let presets: [String: RenditionQuery]
    public let allowArbitrary: Bool
    public let maxOutputDimension: Int

    /// A preset's name: letters, digits, `_` and `-`, 1–64 characters.
    static func isValidPresetName(_ name: Substring) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.utf8.allSatisfy { $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    /// The policy of these settings (`renditions.*`, `limits.maxOutputDimension`); a malformed
    /// default format or preset is an error naming it. (``init(_:)`` reads them from
    /// ``FlipbookSettings``.)
    public init(defaultFormat: String, presets entries: [String], allowArbitrary: Bool, maxOutputDimension: Int)
        throws(RenditionParameterError)
    {
        guard let format = RenditionQuery.Format(rawValue: defaultFormat), format != .avif else {
            throw RenditionParameterError(
                parameter: "renditions.defaultFormat",
                detail: "renditions.defaultFormat must be png, webp or auto (got '\(defaultFormat)')")
        }
        var presets: [String: RenditionQuery] = [:]
        for entry in entries {
            let parts = entry.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, Self.isValidPresetName(parts[0]) else {
                throw RenditionParameterError(
                    parameter: "renditions.presets",
                    detail: "renditions.presets: '\(entry)' is not NAME:QUERY (NAME of letters, digits, _ and -)")
            }
            do {
                presets[String(parts[0])] = try RenditionQuery.preset(parts[1])
            } catch {
                throw RenditionParameterError(
                    parameter: "renditions.presets", detail: "renditions.presets: '\(entry)': \(error.detail)")
            }
        }
        self.defaultFormat = format
        self.presets = presets
        self.allowArbitrary = allowArbitrary
        self.maxOutputDimension = maxOutputDimension
    }

    /// Every parameter allowed, no presets, `defaultFormat` without `format`: the command line's
    /// rules.
    public init(maxOutputDimension: Int, defaultFormat: RenditionQuery.Format = .png) {
        self.defaultFormat = defaultFormat
        presets = [:]
        allowArbitrary = true
        self.maxOutputDimension = maxOutputDimension
    }

    /// What `query` (a frame request's query items) and `accept` (its `Accept` field, read only
    /// when the format is negotiated) ask for, `format` being one of `formats`. Parameters other
    /// than the rendition's are ignored (`t`, cache busters).
    public func requested(
        _ query: [(name: String, value: String)], accept: @autoclosure () -> Substring?,
        formats: [RenditionQuery.Format] = RenditionQuery.Format.allCases
    ) throws(RenditionParameterError) -> RequestedRendition {
        var given = RenditionQuery()
        var preset: String? = nil
        var arbitrary: String? = nil
        for (name, value) in query where RenditionQuery.isParameter(name) {
            if name == "r" {
                guard preset == nil else {
                    throw RenditionParameterError(parameter: "r", detail: "r is given more than once.")
                }
                preset = value
            } else {
                arbitrary = arbitrary ?? name
                try given.set(name, value, formats: formats)
            }
        }
        if let arbitrary, !allowArbitrary {
            throw RenditionParameterError(
                parameter: arbitrary,
                detail: "Only presets are served here (renditions.allowArbitrary is false): ask with ?r=NAME, "
                    + "one of: \(presets.keys.sorted().joined(separator: ", ")).")
        }
        if let preset {
            guard let base = presets[preset] else {
                let known = presets.isEmpty ? "none are configured" : "one of: \(presets.keys.sorted().joined(separator: ", "))"
                throw RenditionParameterError(
                    parameter: "r", detail: "r='\(RenditionQuery.shown(preset))' is not a preset (\(known)).")
            }
            given = base.overlaid(by: given)
        }
        let format = given.format ?? defaultFormat
        try RenditionQuery.checkQuality(given.quality, format: format)
        let fit = given.fit ?? .contain
        if fit != .contain && (given.width == nil || given.height == nil) {
            throw RenditionParameterError(
                parameter: "fit", detail: "fit=\(fit.rawValue) needs both width and height.")
        }
        let negotiated = format == .auto
        let frameFormat: FrameFormat =
            switch format {
            case .png: .png
            case .webp: .webp
            case .avif: .avif
            case .auto: AcceptNegotiation.acceptsWebP(accept()) ? .webp : .png
            }
        let quality: Int? =
            switch frameFormat {
            case .png: nil
            case .webp: given.quality
            case .avif: given.quality ?? AVIFFrameEncoder.defaultQuality
            }
        let request = RenditionRequest(
            width: given.width, height: given.height, dpr: given.dpr ?? .one, fit: fit,
            enlarge: given.enlarge ?? false, format: frameFormat, quality: quality)
        do {
            _ = try request.targetBox(maxOutputDimension: maxOutputDimension)
        } catch {
            throw Self.limitError(error)
        }
        return RequestedRendition(request: request, negotiated: negotiated)
    }

    /// The rendition `requested` makes of a `width`×`height` canvas.
    public func rendition(_ requested: RequestedRendition, canvasWidth: Int, canvasHeight: Int) throws(RenditionParameterError)
        -> FrameRendition
    {
        do {
            return try requested.request.rendition(
                canvasWidth: canvasWidth, canvasHeight: canvasHeight, maxOutputDimension: maxOutputDimension)
        } catch {
            throw Self.limitError(error)
        }
    }

    private static func limitError(_ error: RenditionError) -> RenditionParameterError {
        switch error {
        case .outputTooLarge:
            return RenditionParameterError(
                parameter: "limits.maxOutputDimension", detail: "\(error.description.capitalizedFirst).")
        case .coverNeedsBoth(let fit):
            return RenditionParameterError(parameter: "fit", detail: "fit=\(fit.rawValue) needs both width and height.")
        }
    }
}

/// A frame request's rendition once presets, defaults and `Accept` are applied; the image's
/// canvas turns it into a ``FrameRendition``.
public struct RequestedRendition: Sendable, Equatable {
    public var request: RenditionRequest
    /// The format was chosen by `Accept`: the answer carries `Vary: Accept`.
    public var negotiated: Bool

    /// No rendition parameters and a PNG default: today's frame.
    public static let full = RequestedRendition(request: .full, negotiated: false)

    /// Whether this is ``full`` (``RenditionRequest/isFull``, not negotiated).
    public var isFull: Bool { !negotiated && request.isFull }
}

extension UInt8 {
    fileprivate var isASCIILetterOrDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }
}

extension String {
    fileprivate var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
