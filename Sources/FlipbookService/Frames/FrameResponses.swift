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
    /// The `200` (0) and the `304` (1), kept as templates, each event loop handing out responses
    /// of its own (``LoopCopies``): a response's reference count is then written by one core.
    private let answers: LoopCopies
    /// What these answers keep on the heap (the templates' arrays and file body,
    /// ``HTTPPreparedResponse/Template/overheadBytes``; the `ETag`; this object; every loop's
    /// responses, ``LoopCopies/heapBytes``, counted from the start): in one run of 30,000 cached
    /// two-frame images (heaptrack, docs/benchmarks/scale.md) the answers of both policies took
    /// 2.7 KB a frame where 1.7 KB were counted; now one policy's are kept, and counted from their
    /// arrays' capacities.
    let byteCount: Int

    /// The answers of `answer`'s frame, encoded as `bytes` (shared, not copied: sent with
    /// `sendfile` from the cache's memory file when it is there), kept `answer.caching` long,
    /// for `loops` event loops to hand out (at least one).
    init(_ answer: FrameAnswer, bytes: FrameBytes, loops: Int) {
        etagBytes = .allocate(byteCount: answer.etag.utf8.count, alignment: 1)
        _ = etagBytes.initializeMemory(as: UInt8.self, from: answer.etag.utf8)
        caching = answer.caching
        let headers = answer.headers()
        let ok =
            if let file = Self.fileBody(bytes) {
                HTTPPreparedResponse.Template(status: .ok, headers: headers, fileBody: file)
            } else {
                HTTPPreparedResponse.Template(status: .ok, headers: headers, body: bytes.array)
            }
        let notModified = HTTPPreparedResponse.Template(
            status: .notModified, headers: ["ETag": answer.etag, "Cache-Control": answer.caching.header])
        answers = LoopCopies([ok, notModified], loops: loops)
        // Counted as if every loop had made its responses.
        byteCount =
            ok.overheadBytes + notModified.overheadBytes + answers.heapBytes
            + HTTPPreparedResponse.allocatedBytes(etagBytes.count) + HTTPPreparedResponse.allocatedBytes(64)
    }

    /// The `304` when `notModified` (the request's `If-None-Match` names ``etagUTF8``), else the
    /// `200`, when they are kept `caching` long, the policy they were prepared for (nil
    /// otherwise, and for ``CachePolicy/noStore``, which is never prepared): event loop `loop`'s
    /// own (nil: a new one, for a thread that is not an event loop). One reference handed out.
    func answer(_ caching: CachePolicy, notModified: Bool, loop: Int?) -> HTTPPreparedResponse? {
        guard caching == self.caching else { return nil }
        guard let loop else { return answers.fresh(notModified ? 1 : 0) }
        return answers.response(notModified ? 1 : 0, loop: loop)
    }

    /// The `ETag`'s bytes, valid while this object lives.
    var etagUTF8: UnsafeRawBufferPointer { UnsafeRawBufferPointer(etagBytes) }

    /// Whether these answers carry `etag` (they may not: two ids with the same bytes share a
    /// cache entry, and the `ETag` names the id's kind).
    func carries(etag: String) -> Bool {
        etag.utf8.elementsEqual(etagUTF8)
    }

    deinit { etagBytes.deallocate() }

    /// `attachment` when it is a ``FrameResponses``, lent — not retained — for as long as the
    /// caller's holder keeps it (the frame cache's hit-table lock): cast with `as?`, the one
    /// object every event loop reads was retained and released on every hit, its reference count
    /// written from each loop's core.
    @inline(__always)
    static func lent(_ attachment: (any FrameAttachment)?) -> Unmanaged<FrameResponses>? {
        guard let attachment, type(of: attachment) == FrameResponses.self else { return nil }
        return Unmanaged<FrameResponses>.fromOpaque(Unmanaged<AnyObject>.passUnretained(attachment).toOpaque())
    }

    /// The frame's bytes as a body `sendfile` sends, when they are in the cache's memory file.
    static func fileBody(_ bytes: FrameBytes) -> HTTPFileBody? {
        bytes.file.map { HTTPFileBody(descriptor: $0.descriptor, offset: $0.offset, count: bytes.count, owner: bytes) }
    }
}
