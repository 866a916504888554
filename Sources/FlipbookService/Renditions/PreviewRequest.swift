import AnimatedImage

/// The formats an animated preview is made in: animated WebP, an AVIF image sequence, an MP4 of
/// H.264 video, or a WebM of VP9 video.
public enum PreviewFormat: String, Sendable, Equatable, CaseIterable {
    case webp, avif, mp4, webm

    public var mimeType: String {
        switch self {
        case .webp, .avif: "image/\(rawValue)"
        case .mp4, .webm: "video/\(rawValue)"
        }
    }

    /// What the format is called in messages.
    public var title: String {
        switch self {
        case .webp: "animated WebP"
        case .avif: "AVIF"
        case .mp4: "MP4 (H.264)"
        case .webm: "WebM (VP9)"
        }
    }
}

/// What a preview request asks for: the rendition its frames are scaled to, its format —
/// given (`format=webp|avif|mp4|webm`), or chosen by `Accept` among the image formats (`format=auto`
/// or no `format`, ``AcceptNegotiation/previewFormat(_:)``: a video needs a `<video>` element, so
/// it is only made when asked for) — and, for a format without alpha (MP4), the colour its
/// transparency is composited onto (`background=RRGGBB`; white when absent).
public struct RequestedPreview: Sendable, Equatable {
    /// The frames' rendition (its format is WebP's, which carries `quality`; the preview's own
    /// format is ``format``).
    public var rendition: RequestedRendition
    /// The format asked for; nil when `format=auto`, or no `format`, leaves it to `Accept`.
    public var format: PreviewFormat?
    /// The colour transparent pixels are composited onto: `background` as given (only with
    /// `format=mp4`), else white.
    public var background: OpaqueBackground = .white
}

extension RenditionPolicy {
    /// What a preview request asks for: the frame parameters (`width`, `height`, `fit`, `dpr`,
    /// `enlarge`, `quality`, `r`), `format` (webp, avif, mp4, webm or auto) and `background` (MP4 only).
    public func preview(_ query: [(name: String, value: String)]) throws(RenditionParameterError) -> RequestedPreview {
        var items = query.filter { $0.name != "format" && $0.name != "background" }
        let formats = query.filter { $0.name == "format" }
        var format: PreviewFormat? = nil
        if formats.count > 1 {
            throw RenditionParameterError(parameter: "format", detail: "format is given more than once.")
        }
        if let given = formats.first?.value {
            if given == "auto" {
                format = nil
            } else if let named = PreviewFormat(rawValue: given) {
                format = named
            } else {
                throw RenditionParameterError(
                    parameter: "format",
                    detail: "format='\(RenditionQuery.shown(given))' is not webp, avif, mp4, webm or auto: "
                        + "previews are animated WebP, AVIF, MP4 or WebM.")
            }
        }
        items.append(("format", "webp"))
        var preview = RequestedPreview(rendition: try requested(items, accept: nil), format: format)
        preview.background = try Self.background(query.filter { $0.name == "background" }.map(\.value), format: format)
        return preview
    }

    /// The `background` given (at most once, `RRGGBB` or `RGB` hex, only for a format without
    /// alpha), or white when none is.
    private static func background(_ given: [String], format: PreviewFormat?) throws(RenditionParameterError)
        -> OpaqueBackground
    {
        guard let text = given.first else { return .white }
        guard given.count == 1 else {
            throw RenditionParameterError(parameter: "background", detail: "background is given more than once.")
        }
        guard let colour = OpaqueBackground(hex: text) else {
            throw RenditionParameterError(
                parameter: "background",
                detail: "background='\(RenditionQuery.shown(text))' is not a colour: give six hex digits RRGGBB "
                    + "(or three, RGB), without '#', such as background=000000.")
        }
        guard format == .mp4 else {
            throw RenditionParameterError(
                parameter: "background",
                detail: "background applies to format=mp4 only, which has no alpha: "
                    + "\(format.map { "format=\($0.rawValue)" } ?? "a negotiated image format (WebP or AVIF)") keeps transparency."
            )
        }
        return colour
    }
}
