import AnimatedImage
import FrameCache
import HTTPServer

/// A cached frame's answers, encoded once when the frame enters the frame cache (which keeps them
/// with the frame and counts them in its budget): the `200` with the frame (PNG or WebP, as its
/// rendition says) and the `304`, each for content ids (``CachePolicy/immutable``) and for named and
/// library images (``CachePolicy/revalidate``) — two ids with the same bytes share one cache
/// entry. Their fields are those of the frame's ``FrameAnswer``. Answering a hit then builds
/// nothing: the server adds `Date`, `Server`, the response hook's lines and the request id.
final class FrameResponses: FrameAttachment {
    let etag: String
    private let immutable: (ok: HTTPPreparedResponse, notModified: HTTPPreparedResponse)
    private let revalidated: (ok: HTTPPreparedResponse, notModified: HTTPPreparedResponse)
    let byteCount: Int

    /// The answers of `answer`'s frame, encoded as `bytes` (shared, not copied: sent with
    /// `sendfile` from the cache's memory file when it is there).
    init(_ answer: FrameAnswer, bytes: FrameBytes) {
        etag = answer.etag
        func answers(_ caching: CachePolicy) -> (ok: HTTPPreparedResponse, notModified: HTTPPreparedResponse) {
            let headers = answer.headers(caching: caching)
            let ok =
                if let file = Self.fileBody(bytes) {
                    HTTPPreparedResponse(status: .ok, headers: headers, fileBody: file)
                } else {
                    HTTPPreparedResponse(status: .ok, headers: headers, body: bytes.array)
                }
            let etag = answer.etag
            return (ok, HTTPPreparedResponse(status: .notModified, headers: ["ETag": etag, "Cache-Control": caching.header]))
        }
        immutable = answers(.immutable)
        revalidated = answers(.revalidate)
        byteCount = [immutable.ok, immutable.notModified, revalidated.ok, revalidated.notModified]
            .reduce(etag.utf8.count + 64) { $0 + $1.overheadBytes }
    }

    /// The `200` kept `caching` long (``CachePolicy/noStore`` is never prepared).
    func ok(_ caching: CachePolicy) -> HTTPPreparedResponse {
        caching == .immutable ? immutable.ok : revalidated.ok
    }

    /// The `304` kept `caching` long.
    func notModified(_ caching: CachePolicy) -> HTTPPreparedResponse {
        caching == .immutable ? immutable.notModified : revalidated.notModified
    }

    /// The frame's bytes as a body `sendfile` sends, when they are in the cache's memory file.
    static func fileBody(_ bytes: FrameBytes) -> HTTPFileBody? {
        bytes.file.map { HTTPFileBody(descriptor: $0.descriptor, offset: $0.offset, count: bytes.count, owner: bytes) }
    }
}
