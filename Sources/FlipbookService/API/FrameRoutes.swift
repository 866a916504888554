import AnimatedImage
import FrameCache
import HTTPServer
import Logging

/// `GET /frames/{id}/{index}` and `GET /frames/{id}?t={ms}` (t a decimal number of milliseconds):
/// composited frames from the cache, full size as PNG or in the rendition the query asks for
/// (`width`, `height`, `dpr`, `fit`, `enlarge`, `format`, `quality`, `r`: ``RenditionPolicy``).
extension FlipbookAPI {
    /// Frames of content-addressed images can never change: caches may keep them for a year.
    static let immutableCacheControl = "public, max-age=31536000, immutable"

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
                FrameResponses(
                    record: record, index: index, bytes: bytes, format: rendition.format,
                    etag: Self.frameETag(record, index, rendition, level: level))
            },
            seekAnchor: { derived.keptAnchor(of: record.sha256, before: $0) })
    }

    /// Names the frame's bytes: the image's content, the index, the rendition (none for the
    /// full-size PNG), the deflate level of PNGs and the revision of Flipbook's output
    /// (``AnimatedImage/outputRevision``).
    static func frameETag(_ record: StoredImage, _ index: Int, _ rendition: FrameRendition, level: Int) -> String {
        let metadata = record.metadata
        let name =
            rendition.isExact(width: metadata.width, height: metadata.height)
            ? "z\(level)" : rendition.format == .png ? "\(rendition.key)-z\(level)" : rendition.key
        return "\"f-\(record.sha256.prefix(32))-\(index)-\(name)-r\(AnimatedImage.outputRevision)\""
    }

    /// The rendition the request's query and `Accept` field ask for, or the 400's reason.
    func requestedRendition(_ request: HTTPRequest) -> Result<RequestedRendition, RenditionParameterError> {
        // Today's frame without a query: nothing to parse on the common path.
        if (request.rawQuery ?? "").isEmpty && renditions.defaultFormat == .png { return .success(.full) }
        let items = request.queryItems
        if items.isEmpty && renditions.defaultFormat == .png { return .success(.full) }
        return Result { () throws(RenditionParameterError) in
            try renditions.requested(items, accept: Self.accept(request))
        }
    }

    /// The request's `Accept` fields as one list.
    static func accept(_ request: HTTPRequest) -> Substring {
        let values = request.headers.values(for: "Accept")
        return Substring(values.count == 1 ? values[0] : values.joined(separator: ","))
    }

    /// What `query` resolved to before for `record`'s content on this event loop
    /// (``ResolvedRenditions``), or nil.
    private func resolvedBefore(_ query: Substring, _ request: HTTPRequest, _ record: StoredImage)
        -> ResolvedRenditions.Resolved?
    {
        return resolvedRenditions.value(content: Self.cacheKey(record), query: query, loop: request.loop) {
            AcceptNegotiation.acceptsWebP(Self.accept(request))
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

    /// `Content-Location` of a frame asked for by time: its index, with the request's query less
    /// `t` (the rendition's parameters, as given).
    static func contentLocation(_ request: HTTPRequest, id: String, index: Int) -> String {
        let path = "/frames/\(id)/\(index)"
        guard let mark = request.target.firstIndex(of: "?") else { return path }
        let kept = request.target[request.target.index(after: mark)...].split(separator: "&").filter {
            $0 != "t" && !$0.hasPrefix("t=")
        }
        return kept.isEmpty ? path : path + "?" + kept.joined(separator: "&")
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

    /// `Vary: Accept`, made once (a negotiated hit copies it; adding the field cost it 1,700
    /// instructions).
    static let varyAccept: HTTPHeaders = {
        var headers = HTTPHeaders()
        headers.add(name: "Vary", value: "Accept")
        return headers
    }()

    /// Frame `index` of `record` in the rendition its request resolved to.
    private func serveFrame(
        _ request: HTTPRequest, _ responder: HTTPResponder, record: StoredImage, index: Int,
        resolved: ResolvedRenditions.Resolved, contentLocation: Bool
    ) -> HTTPHandlerResult {
        if let missing = Self.noSuchFrame(record, index) { return .now(missing) }
        let rendition = resolved.rendition
        // What the prepared answers do not hold: where a frame asked for by time is, and that a
        // negotiated format varies by `Accept`.
        var extra = resolved.negotiated ? Self.varyAccept : HTTPHeaders()
        if contentLocation {
            extra.add(name: "Content-Location", value: Self.contentLocation(request, id: record.id, index: index))
        }
        let location = extra
        let key = resolved.cacheKey
        // A cached frame: its answers were encoded when it entered the cache; nothing is built.
        if let hit = cache.cachedFrame(id: key, index: index, reader: request.loop),
            let responses = hit.attachment as? FrameResponses
        {
            if request.headers.ifNoneMatchMatches(responses.etag) {
                return .now(HTTPResponse(responses.notModified(for: record), extraHeaders: location))
            }
            return .now(HTTPResponse(responses.ok(for: record), extraHeaders: location))
        }
        let etag = Self.frameETag(record, index, rendition, level: settings.cache.pngCompressionLevel)
        let cacheControl = record.isImmutable ? Self.immutableCacheControl : "no-cache"
        var headers = FrameResponses.headers(
            record, index: index, format: rendition.format, etag: etag, cacheControl: cacheControl)
        for field in location { headers.add(name: field.name, value: field.value) }
        let image = cacheable(record, rendition)
        if Self.matches(request, etag: etag) {
            var notModified = Self.notModified(etag: etag, cacheControl: cacheControl)
            for field in location { notModified.headers.add(name: field.name, value: field.value) }
            // Still tell the cache where the client is, so decode-ahead follows a revalidating player.
            _ = cache.frame(image, index: index) { _ in }
            return .now(notModified)
        }
        let logger = self.logger
        let frameHeaders = headers
        let store = self.store
        if let frame = cache.frame(
            image, index: index,
            completion: { result in
                if case .failure(.loadFailed) = result, store.health().status == .degraded {
                    // The original went from the local cache and storage cannot be reached.
                    responder.respond(Self.storageUnavailable())
                    return
                }
                if case .success(let frame) = result, let responses = frame.attachment as? FrameResponses {
                    responder.respond(HTTPResponse(responses.ok(for: record), extraHeaders: location))
                    return
                }
                responder.respond(Self.frameResponse(result, headers: frameHeaders, logger: logger))
            })
        {
            if let responses = frame.attachment as? FrameResponses {
                return .now(HTTPResponse(responses.ok(for: record), extraHeaders: location))
            }
            return .now(FrameResponses.response(frame, headers: headers))
        }
        return .later
    }

    static func frameResponse(
        _ result: Result<EncodedFrame, FrameCacheError>, headers: HTTPHeaders,
        logger: Logger
    ) -> HTTPResponse {
        switch result {
        case .success(let frame):
            return FrameResponses.response(frame, headers: headers)
        case .failure(let error):
            switch error {
            case .queueFull(let seconds):
                var extra = HTTPHeaders()
                extra.add(name: "Retry-After", value: String(seconds))
                return .problem(
                    .tooManyRequests, detail: "Too many frames are waiting to be decoded; retry shortly.",
                    headers: extra)
            case .frameOutOfRange(let index, let count):
                return .problem(.notFound, detail: "There is no frame \(index); the image has \(count).")
            case .loadFailed(let why), .decodeFailed(let why):
                logger.error("frame not produced", metadata: ["error": "\(why)"])
                return .problem(.unprocessableContent, detail: "The frame cannot be decoded: \(why).")
            case .removed:
                return .problem(.notFound, detail: "The image was deleted.")
            case .shuttingDown:
                return .problem(.serviceUnavailable, detail: "The server is shutting down.")
            }
        }
    }

    /// Decimal digits only (no sign, no spaces), within `Int`.
    static func parseNonNegative(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text)
    }
}
