import AnimatedImage
import FoundationEssentials
import HTTPServer

/// `GET /images/{id}/preview`: the whole animation as one animated WebP, in the rendition the
/// query asks for (`width`, `height`, `fit`, `dpr`, `enlarge`, `quality`, `r`; lossless without
/// `quality`), made once and kept (``DerivedProducts``).
extension DerivedRoutes {
    func preview(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        let id = request.pathParameters["id"] ?? ""
        guard AcceptNegotiation.acceptsWebPOrWildcard(AcceptNegotiation.field(of: request)) else {
            return .now(
                .problem(
                    .notAcceptable,
                    detail: "A preview is an animated WebP (image/webp); the request's Accept does not take it. "
                        + "Its frames are served as PNG at /frames/\(id)/{index}."))
        }
        let requested: RequestedRendition
        do throws(RenditionParameterError) {
            requested = try renditions.policy.preview(request.queryItems)
        } catch {
            return .now(.problem(.badRequest, detail: error.detail))
        }
        return lookup.withRendition(id, responder, requested, renditions) { record, rendition in
            let path = derived.store.path(record.sha256, DerivedProducts.previewName(rendition))
            let etag =
                "\"p-\(record.sha256.prefix(32))-\(rendition.key)-r\(AnimatedImage.outputRevision)-e\(PreviewMaker.revision)\""
            let cacheControl = CachePolicy.of(record).header
            return whenProductReady(
                responder, start: { derived.preview(record, rendition, completion: $0) },
                ready: {
                    Self.productFile(request, path: path, contentType: "image/webp", etag: etag, cacheControl: cacheControl)
                })
        }
    }
}
