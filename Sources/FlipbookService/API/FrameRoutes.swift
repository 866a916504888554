import AnimatedImage
import FrameCache
import HTTPServer
import Logging

/// `GET /frames/{id}/{index}` and `GET /frames/{id}?t={ms}` (t a decimal number of milliseconds):
/// composited frames from the cache, full size as PNG or in the rendition the query asks for
/// (`width`, `height`, `dpr`, `fit`, `enlarge`, `format`, `quality`, `r`: ``RenditionPolicy``).
extension FlipbookAPI {
    /// The cache entry of an image is keyed by its content, so two ids with the same bytes share
    /// frames and a replaced named image never serves its old frames.
    static func cacheKey(_ record: StoredImage) -> String { record.sha256 }

    /// The image as the frame cache sees it, in `rendition`: loaded from the store on a decode
    /// thread, and each frame prepared with its answers (``FrameResponses``) as it enters the cache.
    func cacheable(_ record: StoredImage, _ rendition: FrameRendition) -> CacheableImage {
        let store = self.store
        let derived = self.derived
        let level = settings.cache.pngCompressionLevel
        return CacheableImage(
            id: Self.cacheKey(record), frameCount: record.metadata.frameCount,
            canvasWidth: record.metadata.width, canvasHeight: record.metadata.height, rendition: rendition,
            load: { try store.loadImage(record) },
            prepare: { index, bytes in
                FrameResponses(FrameAnswer(record: record, index: index, rendition: rendition, pngLevel: level), bytes: bytes)
            },
            seekAnchor: { derived.keptAnchor(of: record.sha256, before: $0) })
    }

    /// The rendition the request's query and `Accept` field ask for, or the 400's reason.
    func requestedRendition(_ request: HTTPRequest) -> Result<RequestedRendition, RenditionParameterError> {
        // Today's frame without a query: nothing to parse on the common path.
        if (request.rawQuery ?? "").isEmpty && renditions.defaultFormat == .png { return .success(.full) }
        let items = request.queryItems
        if items.isEmpty && renditions.defaultFormat == .png { return .success(.full) }
        return Result { () throws(RenditionParameterError) in
            try renditions.requested(items, accept: AcceptNegotiation.field(of: request))
        }
    }

    /// What `query` resolved to before for `record`'s content on this event loop
    /// (``ResolvedRenditions``), or nil.
    private func resolvedBefore(_ query: Substring, _ request: HTTPRequest, _ record: StoredImage)
        -> ResolvedRenditions.Resolved?
    {
        return resolvedRenditions.value(content: Self.cacheKey(record), query: query, loop: request.loop) {
            AcceptNegotiation.acceptsWebP(AcceptNegotiation.field(of: request))
        }
    }

    /// The record of `id` when the store knows it without waiting and the original is local: the
    /// hot path, looked up in the event loop's own copy of the records.
    private func recordAtOnce(_ id: String, _ request: HTTPRequest) -> StoredImage? {
        guard case .found(let record, _) = store.quickLookup(id, reader: request.loop),
            store.hasLocalOriginal(record)
        else { return nil }
        return record
    }

    /// The answer when `id` is an upload session's (its frame, or 429 when the id is valid but no
    /// session fits here); nil when it is not one — every image's frame request asks, so that
    /// case makes nothing (``UploadSessions/lookup(_:)`` tells it by the id's length).
    private func sessionFrame(
        _ id: String, _ request: HTTPRequest, _ responder: HTTPResponder, target: FrameWaiter.Target,
        requested: RequestedRendition
    ) -> HTTPHandlerResult? {
        switch uploads.lookup(id) {
        case .found(let session): uploadFrame(request, responder, session: session, target: target, requested: requested)
        case .full: .now(Self.problem(Self.sessionsFull(settings.uploads)))
        case .unknown: nil
        }
    }

    func frame(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        let id = request.pathParameters["id"] ?? ""
        let text = request.pathParameters["index"] ?? ""
        guard let index = Self.parseNonNegative(text) else {
            return .now(.problem(.badRequest, detail: "The frame index '\(text)' is not a non-negative integer."))
        }
        // Looked up once: the memo of resolved queries and the full path both need it.
        let quickRecord = recordAtOnce(id, request)
        if let record = quickRecord, let query = request.rawQuery, !query.isEmpty,
            let resolved = resolvedBefore(query, request, record)
        {
            return serveFrame(request, responder, record: record, index: index, resolved: resolved, contentLocation: false)
        }
        let requested: RequestedRendition
        switch requestedRendition(request) {
        case .success(let value): requested = value
        case .failure(let error): return .now(.problem(.badRequest, detail: error.detail))
        }
        if let answer = sessionFrame(id, request, responder, target: .index(index), requested: requested) {
            return answer
        }
        if let record = quickRecord {
            return serveFrame(request, responder, record: record, index: index, requested: requested, contentLocation: false)
        }
        return withRecord(id, responder, needsOriginal: true) { [self] record, _ in
            guard let record else { return .now(Self.unknownImage(id)) }
            return serveFrame(request, responder, record: record, index: index, requested: requested, contentLocation: false)
        }
    }

    func frameAtTime(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        let id = request.pathParameters["id"] ?? ""
        guard let text = request.query("t") else {
            return .now(.problem(.badRequest, detail: "Ask for /frames/\(id)/{index} or /frames/\(id)?t={milliseconds}."))
        }
        guard let time = PlaybackTime(decimal: text) else {
            return .now(.problem(.badRequest, detail: "t='\(text)' is not a non-negative number of milliseconds."))
        }
        let requested: RequestedRendition
        switch requestedRendition(request) {
        case .success(let value): requested = value
        case .failure(let error): return .now(.problem(.badRequest, detail: error.detail))
        }
        if let answer = sessionFrame(id, request, responder, target: .time(time), requested: requested) {
            return answer
        }
        if let record = recordAtOnce(id, request) {
            return serveFrame(
                request, responder, record: record, index: Self.frameIndex(record, at: time),
                requested: requested, contentLocation: true)
        }
        return withRecord(id, responder, needsOriginal: true) { [self] record, _ in
            guard let record else { return .now(Self.unknownImage(id)) }
            return serveFrame(
                request, responder, record: record, index: Self.frameIndex(record, at: time),
                requested: requested, contentLocation: true)
        }
    }

    /// The frame shown at `time` of `record`'s playback.
    static func frameIndex(_ record: StoredImage, at time: PlaybackTime) -> Int {
        let frames = record.metadata.frames
        return Timeline(rawDelaysMs: frames.map(\.rawDelayMs), playCount: record.metadata.playCount).frameIndex(at: time)
    }

    /// What `requested` makes of `record`'s canvas, or the 400's reason.
    func rendition(_ requested: RequestedRendition, of record: StoredImage) -> Result<FrameRendition, RenditionParameterError> {
        let (width, height) = (record.metadata.width, record.metadata.height)
        if requested == .full { return .success(.exact(width: width, height: height)) }
        return Result { () throws(RenditionParameterError) in
            try renditions.rendition(requested, canvasWidth: width, canvasHeight: height)
        }
    }

    /// Calls `body` with the record of `id` and the rendition `requested` makes of it; answers 404
    /// when there is no such image and 400 when the rendition cannot be made of it.
    func withRendition(
        _ id: String, _ responder: HTTPResponder, _ requested: RequestedRendition,
        _ body: @escaping @Sendable (StoredImage, FrameRendition) -> HTTPHandlerResult
    ) -> HTTPHandlerResult {
        withRecord(id, responder) { [self] record, _ in
            guard let record else { return .now(Self.unknownImage(id)) }
            switch rendition(requested, of: record) {
            case .success(let rendition): return body(record, rendition)
            case .failure(let error): return .now(.problem(.badRequest, detail: error.detail))
            }
        }
    }

    /// Frame `index` of `record` in the rendition `requested` makes of it (remembered for the
    /// request's query, ``ResolvedRenditions``).
    private func serveFrame(
        _ request: HTTPRequest, _ responder: HTTPResponder, record: StoredImage, index: Int,
        requested: RequestedRendition, contentLocation: Bool
    ) -> HTTPHandlerResult {
        if let missing = Self.noSuchFrame(record, index) { return .now(missing) }
        let rendition: FrameRendition
        switch self.rendition(requested, of: record) {
        case .success(let value): rendition = value
        case .failure(let error): return .now(.problem(.badRequest, detail: error.detail))
        }
        let resolved = ResolvedRenditions.Resolved(
            rendition: rendition,
            cacheKey: CacheableImage.key(
                id: Self.cacheKey(record), rendition: rendition, canvasWidth: record.metadata.width,
                canvasHeight: record.metadata.height),
            negotiated: requested.negotiated)
        if !contentLocation, let query = request.rawQuery, !query.isEmpty {
            resolvedRenditions.remember(resolved, content: Self.cacheKey(record), query: query, loop: request.loop)
        }
        return serveFrame(request, responder, record: record, index: index, resolved: resolved, contentLocation: contentLocation)
    }

    /// The 404 for an index past the image's last frame, or nil.
    static func noSuchFrame(_ record: StoredImage, _ index: Int) -> HTTPResponse? {
        let count = record.metadata.frameCount
        guard index >= count else { return nil }
        return .problem(
            .notFound,
            detail: "Image '\(record.id)' has \(count) frame\(count == 1 ? "" : "s"); there is no frame \(index).")
    }

    /// Frame `index` of `record` in the rendition its request resolved to.
    private func serveFrame(
        _ request: HTTPRequest, _ responder: HTTPResponder, record: StoredImage, index: Int,
        resolved: ResolvedRenditions.Resolved, contentLocation: Bool
    ) -> HTTPHandlerResult {
        if let missing = Self.noSuchFrame(record, index) { return .now(missing) }
        // What the prepared answers do not hold: where a frame asked for by time is, and that a
        // negotiated format varies by `Accept`.
        let extra = FrameAnswer.extraHeaders(
            negotiated: resolved.negotiated,
            contentLocation: contentLocation ? FrameAnswer.contentLocation(request, id: record.id, index: index) : nil)
        let key = resolved.cacheKey
        // A cached frame: its answers were encoded when it entered the cache; nothing is built.
        if let hit = cache.cachedFrame(id: key, index: index, reader: request.loop),
            let responses = hit.attachment as? FrameResponses
        {
            let caching = CachePolicy.of(record)
            if request.headers.ifNoneMatchMatches(responses.etag) {
                return .now(HTTPResponse(responses.notModified(caching), extraHeaders: extra))
            }
            return .now(HTTPResponse(responses.ok(caching), extraHeaders: extra))
        }
        let answer = FrameAnswer(
            record: record, index: index, rendition: resolved.rendition, pngLevel: settings.cache.pngCompressionLevel,
            extra: extra)
        let image = cacheable(record, resolved.rendition)
        if request.headers.ifNoneMatchMatches(answer.etag) {
            // Still tell the cache where the client is, so decode-ahead follows a revalidating player.
            _ = cache.frame(image, index: index) { _ in }
            return .now(answer.notModified())
        }
        let (logger, store) = (self.logger, self.store)
        let frame = cache.frame(image, index: index) { result in
            if case .failure(.loadFailed) = result, store.health().status == .degraded {
                // The original went from the local cache and storage cannot be reached.
                responder.respond(Self.storageUnavailable())
                return
            }
            responder.respond(answer.response(result, logger: logger))
        }
        if let frame { return .now(answer.response(.success(frame), logger: logger)) }
        return .later
    }

    /// Decimal digits only (no sign, no spaces), within `Int`.
    static func parseNonNegative(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text)
    }
}
