import AnimatedImage
import FrameCache
import HTTPServer
import ImageStorage
import Logging

/// `GET /frames/{id}/{index}` and `GET /frames/{id}?t={ms}` (t a decimal number of milliseconds):
/// composited frames from the cache, full size as PNG or in the rendition the query asks for
/// (`width`, `height`, `dpr`, `fit`, `enlarge`, `format`, `quality`, `r`: ``RenditionPolicy``).
/// An upload session's id is answered by ``UploadFrameRoutes``. An AVIF frame that is not cached
/// takes one of its client's encode slots until it is made (``ClientEncodeLimit``: 429 beyond).
struct FrameRoutes: Sendable {
    let serving: FrameServing
    let uploads: UploadFrameRoutes

    func register(in router: inout Router) {
        router.get("/frames/:id/:index") { frame($0, $1) }
        router.get("/frames/:id") { frameAtTime($0, $1) }
    }

    func frame(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        guard let index = request.pathParameters.nonNegativeInteger("index") else {
            let text = request.pathParameters["index"] ?? ""
            return .now(.problem(.badRequest, detail: "The frame index '\(text)' is not a non-negative integer."))
        }
        switch serving.lookup.recordAtOnce(named: request) {
        case .held(let held): return frame(request, responder, id: held.id, index: index, record: held.cached.record)
        case .found(let id, let record): return frame(request, responder, id: id, index: index, record: record)
        case .notAtHand(let id): return serveFrame(request, responder, id: id, target: .index(index))
        }
    }

    /// Frame `index` of image `id`, whose record is at hand: from the memo of resolved queries
    /// when the query is in it, else by the full path. The record is bound once and borrowed all
    /// the way (an optional record kept across both was copied at each binding and destroyed
    /// through the generic value witnesses). Inlined into its callers: called, it was handed a
    /// copy of the record held by the record cache's view, made and destroyed on every hit.
    @inline(__always)
    private func frame(
        _ request: HTTPRequest, _ responder: HTTPResponder, id: String, index: Int, record: StoredImage
    ) -> HTTPHandlerResult {
        if request.hasQuery, let resolved = resolvedBefore(request, record) {
            return serveFrame(request, responder, record: record, index: index, resolved: resolved, byTime: false)
        }
        return serveFrame(request, responder, id: id, target: .index(index), record: record)
    }

    func frameAtTime(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        guard let text = request.query("t") else {
            let id = request.pathParameters["id"] ?? ""
            return .now(.problem(.badRequest, detail: "Ask for /frames/\(id)/{index} or /frames/\(id)?t={milliseconds}."))
        }
        guard let time = PlaybackTime(decimal: text) else {
            return .now(.problem(.badRequest, detail: "t='\(text)' is not a non-negative number of milliseconds."))
        }
        switch serving.lookup.recordAtOnce(named: request) {
        case .held(let held):
            return serveFrame(request, responder, id: held.id, target: .time(time), record: held.cached.record)
        case .found(let id, let record): return serveFrame(request, responder, id: id, target: .time(time), record: record)
        case .notAtHand(let id): return serveFrame(request, responder, id: id, target: .time(time))
        }
    }

    /// The frame `target` names of image `id`, whose record is at hand, in the rendition the
    /// request asks for (an upload session of that id is asked first, ``UploadFrameRoutes``).
    private func serveFrame(
        _ request: HTTPRequest, _ responder: HTTPResponder, id: String, target: FrameWaiter.Target,
        record: StoredImage
    ) -> HTTPHandlerResult {
        switch asked(request, responder, id: id, target: target) {
        case .answered(let answer): return answer
        case .rendition(let requested):
            return serveFrame(request, responder, record: record, target: target, requested: requested)
        }
    }

    /// The frame `target` names of image or upload session `id`, whose record is not at hand: an
    /// upload session's (``UploadFrameRoutes``), else the image's from storage.
    private func serveFrame(
        _ request: HTTPRequest, _ responder: HTTPResponder, id: String, target: FrameWaiter.Target
    ) -> HTTPHandlerResult {
        switch asked(request, responder, id: id, target: target) {
        case .answered(let answer): return answer
        case .rendition(let requested):
            return serving.lookup.withKnownRecord(id, responder, needsOriginal: true) { record, _ in
                serveFrame(request, responder, record: record, target: target, requested: requested)
            }
        }
    }

    /// What a frame request asks for before its image is looked at.
    private enum Asked {
        /// The rendition the query asks for.
        case rendition(RequestedRendition)
        /// The answer already: a query that is not a rendition (400), or an upload session's frame.
        case answered(HTTPHandlerResult)
    }

    /// The rendition `request` asks for of `id`'s frame `target`, or its answer when the query is
    /// not a rendition or `id` is an upload session's.
    private func asked(_ request: HTTPRequest, _ responder: HTTPResponder, id: String, target: FrameWaiter.Target)
        -> Asked
    {
        let requested: RequestedRendition
        switch serving.renditions.requested(request) {
        case .success(let value): requested = value
        case .failure(let error): return .answered(.now(.problem(.badRequest, detail: error.detail)))
        }
        if let answer = uploads.frame(id, request, responder, target: target, requested: requested) {
            return .answered(answer)
        }
        return .rendition(requested)
    }

    /// The index of the frame `target` names in `record`: the index itself, or the frame shown at
    /// that time of its playback.
    static func frameIndex(_ record: StoredImage, of target: FrameWaiter.Target) -> Int {
        switch target {
        case .index(let index): index
        case .time(let time): frameIndex(record, at: time)
        }
    }

    /// The frame shown at `time` of `record`'s playback.
    static func frameIndex(_ record: StoredImage, at time: PlaybackTime) -> Int {
        let frames = record.metadata.frames
        return Timeline(rawDelaysMs: frames.map(\.rawDelayMs), playCount: record.metadata.playCount).frameIndex(at: time)
    }

    /// Whether `index` is past the image's last frame. (Checked on every hit, twice: a plain
    /// comparison, where a function answering an optional 404 wrote and destroyed an empty
    /// response each time.)
    @inline(__always)
    static func isPastLastFrame(_ record: StoredImage, _ index: Int) -> Bool {
        index >= record.metadata.frameCount
    }

    /// The 404 for an index past the image's last frame (``isPastLastFrame(_:_:)``).
    @inline(never)
    static func noSuchFrame(_ record: StoredImage, _ index: Int) -> HTTPResponse {
        let count = record.metadata.frameCount
        return .problem(
            .notFound,
            detail: "Image '\(record.id)' has \(count) frame\(count == 1 ? "" : "s"); there is no frame \(index).")
    }

    /// What the request's query (its bytes, read in place) resolved to before for `record`'s
    /// content on this event loop (``ResolvedRenditions``), or nil.
    private func resolvedBefore(_ request: HTTPRequest, _ record: StoredImage) -> ResolvedRenditions.Resolved? {
        request.withRawQuery { query in
            serving.renditions.resolved.value(content: record.frameCacheID, query: query, loop: request.loop) {
                AcceptNegotiation.acceptsWebP(AcceptNegotiation.field(of: request))
            }
        }
    }

    /// The frame `target` names of `record` in the rendition `requested` makes of it (remembered
    /// for the request's query, ``ResolvedRenditions``, when asked for by index).
    private func serveFrame(
        _ request: HTTPRequest, _ responder: HTTPResponder, record: StoredImage, target: FrameWaiter.Target,
        requested: RequestedRendition
    ) -> HTTPHandlerResult {
        let index = Self.frameIndex(record, of: target)
        let byTime: Bool
        if case .time = target { byTime = true } else { byTime = false }
        if Self.isPastLastFrame(record, index) { return .now(Self.noSuchFrame(record, index)) }
        let rendition: FrameRendition
        switch serving.renditions.rendition(requested, of: record) {
        case .success(let value): rendition = value
        case .failure(let error): return .now(.problem(.badRequest, detail: error.detail))
        }
        let resolved = ResolvedRenditions.Resolved(
            rendition: rendition, cacheKey: serving.frames.renditionCacheKey(record, rendition),
            negotiated: requested.negotiated)
        if !byTime, request.hasQuery {
            request.withRawQuery {
                serving.renditions.resolved.remember(resolved, content: record.frameCacheID, query: $0, loop: request.loop)
            }
        }
        return serveFrame(request, responder, record: record, index: index, resolved: resolved, byTime: byTime)
    }

    /// Frame `index` of `record` in the rendition its request resolved to.
    private func serveFrame(
        _ request: HTTPRequest, _ responder: HTTPResponder, record: StoredImage, index: Int,
        resolved: ResolvedRenditions.Resolved, byTime: Bool
    ) -> HTTPHandlerResult {
        if Self.isPastLastFrame(record, index) { return .now(Self.noSuchFrame(record, index)) }
        // What the prepared answers do not hold: where a frame asked for by time is, and that a
        // negotiated format varies by `Accept` (built only then: most hits carry nothing extra).
        let hasExtra = resolved.negotiated || byTime
        // A cached frame: its answers were encoded when it entered the cache; nothing is built
        // (unless they were prepared for the other policy: the same bytes under a name and a
        // content id; the answer is then built below).
        if let prepared = cachedAnswer(request, record, index: index, resolved: resolved) {
            guard hasExtra else { return .now(HTTPResponse(prepared)) }
            return .now(HTTPResponse(prepared, extraHeaders: Self.extra(request, record, index, resolved, byTime)))
        }
        let extra = Self.extra(request, record, index, resolved, byTime)
        return serveUncached(request, responder, record: record, index: index, resolved: resolved, extra: extra)
    }

    /// The prepared answer to `request` of the cached frame `index` of `record` in the rendition
    /// `resolved` names — its `304` when `If-None-Match` names its `ETag`, else its `200`, the
    /// request's event loop's own — when the frame is cached with answers for the record's
    /// policy. Looked up through the loop's hit table by the rendition's key, or by the record's
    /// content id read where the record holds it.
    @inline(__always)
    private func cachedAnswer(
        _ request: HTTPRequest, _ record: StoredImage, index: Int, resolved: ResolvedRenditions.Resolved
    ) -> HTTPPreparedResponse? {
        guard let key = resolved.cacheKey else {
            return cachedAnswer(request, id: record.frameCacheID, index: index, caching: .of(record))
        }
        return cachedAnswer(request, id: key, index: index, caching: .of(record))
    }

    /// ``cachedAnswer(_:_:index:resolved:)`` of the frame cached under `id`: the answers are read
    /// where the cache holds them, under the hit table's lock, and only the one sent is retained.
    @inline(__always)
    private func cachedAnswer(
        _ request: HTTPRequest, id: String, index: Int, caching: CachePolicy
    ) -> HTTPPreparedResponse? {
        let answer = serving.cache.withCachedAttachment(id: id, index: index, reader: request.loop) { attachment in
            FrameResponses.lent(attachment)?._withUnsafeGuaranteedRef { responses in
                let notModified = request.headers.ifNoneMatchMatches(utf8: responses.etagUTF8)
                return responses.answer(caching, notModified: notModified, loop: request.loop)
            }
        }
        return answer.map { unsafeDowncast($0, to: HTTPPreparedResponse.self) }
    }

    /// The headers a frame's prepared answers do not hold: `Content-Location` for a frame asked
    /// for by time, `Vary: Accept` for a negotiated format. (A static function: a local one
    /// capturing the record had every hit copy and destroy it.)
    private static func extra(
        _ request: HTTPRequest, _ record: StoredImage, _ index: Int, _ resolved: ResolvedRenditions.Resolved,
        _ byTime: Bool
    ) -> HTTPHeaders {
        FrameAnswer.extraHeaders(
            negotiated: resolved.negotiated,
            contentLocation: byTime ? FrameAnswer.contentLocation(request, id: record.id, index: index) : nil)
    }

    /// Frame `index` of `record` in the rendition its request resolved to, when the cache has no
    /// prepared answer for it. Kept out of line: the closure below captures copies of the record's
    /// parts, and inlined into the hit path above it had every hit copy and destroy the record.
    @inline(never)
    private func serveUncached(
        _ request: HTTPRequest, _ responder: HTTPResponder, record: StoredImage, index: Int,
        resolved: ResolvedRenditions.Resolved, extra: HTTPHeaders
    ) -> HTTPHandlerResult {
        let answer = serving.frames.answer(record, index: index, rendition: resolved.rendition, extra: extra)
        let image = serving.frames.cacheable(record, resolved.rendition)
        if request.headers.ifNoneMatchMatches(answer.etag) {
            // Still tell the cache where the client is, so decode-ahead follows a revalidating player.
            _ = serving.cache.frame(image, index: index) { _ in }
            return .now(answer.notModified())
        }
        // An AVIF frame to be encoded holds one of its client's slots until it is made.
        let client = serving.avifEncodes.client(of: request, format: resolved.rendition.format)
        if let refusal = serving.avifEncodes.refusal(client, extra: extra) { return .now(refusal) }
        let (logger, store, avifEncodes) = (serving.logger, serving.lookup.store, serving.avifEncodes)
        let frame = serving.cache.frame(image, index: index) { result in
            avifEncodes.release(client)
            if case .failure(.loadFailed) = result, store.health().status == .degraded {
                // The original went from the local cache and storage cannot be reached.
                responder.respond(.storageUnavailable())
                return
            }
            responder.respond(answer.response(result, logger: logger))
        }
        if let frame {
            avifEncodes.release(client)
            return .now(answer.response(.success(frame), logger: logger))
        }
        return .later
    }
}
