import AnimatedImage
import AnimationEncoding
import FoundationEssentials
import HTTPServer

/// `GET /images/{id}/preview`: the whole animation as one animated WebP, AVIF, MP4 or WebM
/// (`format=webp`, `avif`, `mp4`, `webm`, or `auto`, the default: WebP or AVIF by `Accept`, with
/// `Vary: Accept`), in the rendition the query asks for (`width`, `height`, `fit`, `dpr`,
/// `enlarge`, `quality`, `r`; a WebP is lossless without `quality`, AVIF, MP4 and WebM always lossy,
/// an MP4's sides made even, its transparency composited onto `background`), made once and
/// kept (``DerivedProducts``).
extension DerivedRoutes {
    func preview(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        let id = request.pathParameters["id"] ?? ""
        let requested: RequestedPreview
        do throws(RenditionParameterError) {
            requested = try renditions.policy.preview(request.queryItems)
        } catch {
            return .now(.problem(.badRequest, detail: error.detail))
        }
        let accept = AcceptNegotiation.field(of: request)
        let negotiated = requested.format == nil
        let chosen =
            requested.format.map { AcceptNegotiation.accepts($0, accept) ? $0 : nil } ?? AcceptNegotiation.previewFormat(accept)
        guard let format = chosen else {
            let asked = requested.format.map { "\($0 == .webp ? "an" : "a") \($0.title) (\($0.mimeType))" }
            return .now(
                .problem(
                    .notAcceptable,
                    detail: "A preview is \(asked ?? "an animated WebP (image/webp) or AVIF (image/avif)"); "
                        + "the request's Accept does not take it. Its frames are served as PNG at /frames/\(id)/{index}.",
                    headers: negotiated ? ["Vary": "Accept"] : [:]))
        }
        return lookup.withRendition(id, responder, requested.rendition, renditions) { record, asked in
            // An MP4's 4:2:0 frames have even sides: its name and ETag are the even rendition's.
            let rendition = format == .mp4 ? MP4PreviewMaker.evenSized(asked) : asked
            let background = requested.background
            let path = derived.store.path(
                record.sha256, DerivedProducts.previewName(rendition, format, background: background))
            let etag =
                "\"p-\(record.sha256.prefix(32))-\(rendition.key)\(DerivedProducts.backgroundTag(background))"
                + "-r\(AnimatedImage.outputRevision)-\(format.encoderRevision)\""
            let cacheControl = CachePolicy.of(record).header
            return whenProductReady(
                responder, start: { derived.preview(record, rendition, format, background: background, completion: $0) },
                ready: {
                    var response = Self.productFile(
                        request, path: path, contentType: format.mimeType, etag: etag, cacheControl: cacheControl)
                    if negotiated { response.headers.add(name: "Vary", value: "Accept") }
                    return response
                })
        }
    }
}
