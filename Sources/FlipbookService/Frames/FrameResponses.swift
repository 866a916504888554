import AnimatedImage
import FrameCache
import HTTPServer

/// A cached frame's answers, encoded once when the frame enters the frame cache (which keeps them
/// with the frame and counts them in its budget): the `200` with the frame (PNG or WebP, as its
/// rendition says) and the `304`, kept as long as the image that made the frame says
/// (``CachePolicy/immutable`` for content ids, ``CachePolicy/revalidate`` for named and library
/// images). Two ids with the same bytes share one cache entry; a hit through the id of the other
/// policy builds its answer instead (rare: the same bytes uploaded and named). Their fields are
/// those of the frame's ``FrameAnswer``. Answering a hit then builds nothing: the server adds
/// `Date`, `Server`, the response hook's lines and the request id.
final class FrameResponses: FrameAttachment {
    /// The `ETag`'s bytes (the only copy kept): a trivial value, read by the hit path's
    /// `If-None-Match` check without the retain and release that reading a `String` costs.
    /// (Written once, in `init`, and only read after: safe to share between threads.)
    nonisolated(unsafe) private let etagBytes: UnsafeMutableRawBufferPointer
    /// How long the prepared answers are kept.
    let caching: CachePolicy
    private let ok: HTTPPreparedResponse
    private let notModified: HTTPPreparedResponse
    /// What these answers keep on the heap (``HTTPPreparedResponse/overheadBytes``, the `ETag`,
    /// this object and the file body): in one run of 30,000 cached two-frame images (heaptrack,
    /// docs/benchmarks/scale.md) the answers of both policies took 2.7 KB a frame where 1.7 KB were
    /// counted; now one policy's are kept, and counted from their arrays' capacities.
    let byteCount: Int

    /// The answers of `answer`'s frame, encoded as `bytes` (shared, not copied: sent with
    /// `sendfile` from the cache's memory file when it is there), kept `answer.caching` long.
    init(_ answer: FrameAnswer, bytes: FrameBytes) {
        etagBytes = .allocate(byteCount: answer.etag.utf8.count, alignment: 1)
        _ = etagBytes.initializeMemory(as: UInt8.self, from: answer.etag.utf8)
        caching = answer.caching
        let headers = answer.headers()
        let file = Self.fileBody(bytes)
        ok =
            if let file {
                HTTPPreparedResponse(status: .ok, headers: headers, fileBody: file)
            } else {
                HTTPPreparedResponse(status: .ok, headers: headers, body: bytes.array)
            }
        notModified = HTTPPreparedResponse(
            status: .notModified, headers: ["ETag": answer.etag, "Cache-Control": answer.caching.header])
        byteCount =
            ok.overheadBytes + notModified.overheadBytes
            + HTTPPreparedResponse.allocatedBytes(etagBytes.count) + HTTPPreparedResponse.allocatedBytes(64)
            + (file == nil ? 0 : HTTPPreparedResponse.allocatedBytes(48))
    }

    /// The `304` when `notModified` (the request's `If-None-Match` names ``etagUTF8``), else the
    /// `200`, when they are kept `caching` long, the policy they were prepared for (nil
    /// otherwise, and for ``CachePolicy/noStore``, which is never prepared). One reference
    /// handed out.
    func answer(_ caching: CachePolicy, notModified: Bool) -> HTTPPreparedResponse? {
        guard caching == self.caching else { return nil }
        return notModified ? self.notModified : ok
    }

    /// The `ETag`'s bytes, valid while this object lives.
    var etagUTF8: UnsafeRawBufferPointer { UnsafeRawBufferPointer(etagBytes) }

    /// Whether these answers carry `etag` (they may not: two ids with the same bytes share a
    /// cache entry, and the `ETag` names the id's kind).
    func carries(etag: String) -> Bool {
        etag.utf8.elementsEqual(etagUTF8)
    }

    deinit { etagBytes.deallocate() }

    /// The frame's bytes as a body `sendfile` sends, when they are in the cache's memory file.
    static func fileBody(_ bytes: FrameBytes) -> HTTPFileBody? {
        bytes.file.map { HTTPFileBody(descriptor: $0.descriptor, offset: $0.offset, count: bytes.count, owner: bytes) }
    }
}
