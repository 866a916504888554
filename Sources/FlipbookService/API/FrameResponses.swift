import AnimatedImage
import FrameCache
import HTTPServer

/// A cached frame's answers, encoded once when the frame enters the frame cache (which keeps them
/// with the frame and counts them in its budget): `200` with the frame (PNG or WebP, as its
/// rendition says) and `304`, each for content
/// ids (`Cache-Control: public, max-age=31536000, immutable`) and for named and library images
/// (`no-cache`) — two ids with the same bytes share one cache entry. Answering a hit then builds
/// nothing: the server adds `Date`, `Server`, the response hook's lines and the request id.
final class FrameResponses: FrameAttachment {
    let etag: String
    private let immutable: (ok: HTTPPreparedResponse, notModified: HTTPPreparedResponse)
    private let revalidated: (ok: HTTPPreparedResponse, notModified: HTTPPreparedResponse)
    let byteCount: Int

    /// The answers for frame `index` of `record`'s content, encoded as `bytes` in `format`
    /// (shared, not copied: sent with `sendfile` from the cache's memory file when it is there).
    init(record: StoredImage, index: Int, bytes png: FrameBytes, format: FrameFormat, etag: String) {
        self.etag = etag
        func answers(_ cacheControl: String) -> (ok: HTTPPreparedResponse, notModified: HTTPPreparedResponse) {
            let headers = Self.headers(record, index: index, format: format, etag: etag, cacheControl: cacheControl)
            let ok =
                if let file = Self.fileBody(png) {
                    HTTPPreparedResponse(status: .ok, headers: headers, fileBody: file)
                } else {
                    HTTPPreparedResponse(status: .ok, headers: headers, body: png.array)
                }
            return (ok, HTTPPreparedResponse(status: .notModified, headers: ["ETag": etag, "Cache-Control": cacheControl]))
        }
        immutable = answers(FlipbookAPI.immutableCacheControl)
        revalidated = answers("no-cache")
        byteCount = [immutable.ok, immutable.notModified, revalidated.ok, revalidated.notModified]
            .reduce(etag.utf8.count + 64) { $0 + $1.overheadBytes }
    }

    /// The `200` for `record` (its id decides the caching headers).
    func ok(for record: StoredImage) -> HTTPPreparedResponse {
        record.isImmutable ? immutable.ok : revalidated.ok
    }

    /// The `304` for `record`.
    func notModified(for record: StoredImage) -> HTTPPreparedResponse {
        record.isImmutable ? immutable.notModified : revalidated.notModified
    }

    /// The frame's PNG as a body `sendfile` sends, when it is in the cache's memory file.
    static func fileBody(_ png: FrameBytes) -> HTTPFileBody? {
        png.file.map { HTTPFileBody(descriptor: $0.descriptor, offset: $0.offset, count: png.count, owner: png) }
    }

    /// A `200` with the frame's PNG and `headers`, encoded now (frames made before the answers
    /// were prepared, or without them).
    static func response(_ frame: EncodedFrame, headers: HTTPHeaders) -> HTTPResponse {
        if let file = fileBody(frame.bytes) { return HTTPResponse(status: .ok, headers: headers, fileBody: file) }
        return HTTPResponse(status: .ok, headers: headers, body: frame.bytes.array)
    }

    /// The header fields of a frame: type, validator, caching, and the frame's place and delay.
    static func headers(
        _ record: StoredImage, index: Int, format: FrameFormat = .png, etag: String, cacheControl: String
    ) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: format.mimeType)
        headers.add(name: "ETag", value: etag)
        headers.add(name: "Cache-Control", value: cacheControl)
        headers.add(name: "X-Frame-Index", value: String(index))
        headers.add(name: "X-Frame-Count", value: String(record.metadata.frameCount))
        headers.add(name: "X-Frame-Delay-Ms", value: String(record.metadata.frames[index].delayMs))
        return headers
    }
}
