import AnimatedImage

/// `rendition=NAME` on `GET /images/{id}/cache`: a rendition named as that route's answer (and a
/// frame's `ETag`) names it — `full`, or a ``FrameRendition/key`` such as `480x270-webp-q55` — so
/// nothing (`Accept`, a preset, the size rule) is resolved again. A player reads the key from its
/// frames and asks about exactly the rendition it shows, whatever its page's `Accept`.
enum RenditionName: Sendable, Equatable {
    /// The full-size PNG frames.
    case full
    /// A scaled, cropped or WebP rendition, by its key.
    case key(FrameRendition)

    /// The rendition `rendition` names in `items` (a request's query), nil when it is not given.
    /// It is given once, alone: with a rendition parameter (``RenditionQuery/isParameter(_:)``), or
    /// as anything but `full` or a key exactly as the server writes one, it is an error naming it.
    static func named(in items: [(name: String, value: String)]) throws(RenditionParameterError) -> RenditionName? {
        var given: String? = nil
        for (name, value) in items {
            if name == "rendition" {
                guard given == nil else {
                    throw RenditionParameterError(parameter: "rendition", detail: "rendition is given more than once.")
                }
                given = value
            }
        }
        guard let given else { return nil }
        if let other = items.first(where: { RenditionQuery.isParameter($0.name) }) {
            throw RenditionParameterError(
                parameter: "rendition", detail: "rendition names the rendition; \(other.name) cannot be given with it.")
        }
        if given == "full" { return .full }
        guard let rendition = FrameRendition(key: Substring(given)) else {
            throw RenditionParameterError(
                parameter: "rendition",
                detail: "rendition='\(RenditionQuery.shown(given))' is neither full nor a rendition key as the server "
                    + "writes one (such as 480x270-webp-q55: WIDTHxHEIGHT, then -png, -webp-ll or -webp-qQUALITY).")
        }
        return .key(rendition)
    }
}
