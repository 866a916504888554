import AnimatedImage
import Foundation
import HTTPServer

/// `GET /images/{id}/preview`: the whole animation as one animated WebP, in the rendition the
/// query asks for (`width`, `height`, `fit`, `dpr`, `enlarge`, `quality`, `r`; lossless without
/// `quality`), made once and kept (``DerivedProducts``).
extension FlipbookAPI {
    func preview(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        let id = request.pathParameters["id"] ?? ""
        let accept = request.headers.values(for: "Accept").joined(separator: ",")
        guard AcceptNegotiation.acceptsWebPOrWildcard(accept.isEmpty ? nil : Substring(accept)) else {
            return .now(
                .problem(
                    .notAcceptable,
                    detail: "A preview is an animated WebP (image/webp); the request's Accept does not take it. "
                        + "Its frames are served as PNG at /frames/\(id)/{index}."))
        }
        var items: [(name: String, value: String)] = []
        for item in request.queryItems where item.name != "format" { items.append(item) }
        if let format = request.queryItems.first(where: { $0.name == "format" }) {
            guard format.value == "webp" else {
                return .now(
                    .problem(
                        .badRequest,
                        detail: "format='\(RenditionQuery.shown(format.value))' is not webp: previews are animated WebP."))
            }
        }
        items.append(("format", "webp"))
        let requested: RequestedRendition
        do throws(RenditionParameterError) {
            requested = try renditions.requested(items, accept: nil)
        } catch {
            return .now(.problem(.badRequest, detail: error.detail))
        }
        return withRecord(id, responder) { [self] record, _ in
            guard let record else { return .now(Self.unknownImage(id)) }
            let rendition: FrameRendition
            switch self.rendition(requested, of: record) {
            case .success(let value): rendition = value
            case .failure(let error): return .now(.problem(.badRequest, detail: error.detail))
            }
            let path = derived.store.path(record.sha256, DerivedProducts.previewName(rendition))
            let etag =
                "\"p-\(record.sha256.prefix(32))-\(rendition.key)-r\(AnimatedImage.outputRevision)-e\(PreviewMaker.revision)\""
            let cacheControl = record.isImmutable ? Self.immutableCacheControl : "no-cache"
            let derived = self.derived
            return whenProductReady(
                responder, start: { derived.preview(record, rendition, completion: $0) },
                ready: {
                    Self.productFile(request, path: path, contentType: "image/webp", etag: etag, cacheControl: cacheControl)
                })
        }
    }
}
