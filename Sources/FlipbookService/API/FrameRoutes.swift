import AnimatedImage
import FrameCache
import HTTPServer
import Logging

/// `GET /frames/{id}/{index}` and `GET /frames/{id}?t={ms}` (t a decimal number of milliseconds):
/// composited frames from the cache.
extension FlipbookAPI {
    /// Frames of content-addressed images can never change: caches may keep them for a year.
    static let immutableCacheControl = "public, max-age=31536000, immutable"

    /// The cache entry of an image is keyed by its content, so two ids with the same bytes share
    /// frames and a replaced named image never serves its old frames.
    static func cacheKey(_ record: StoredImage) -> String { record.sha256 }

    /// The image as the frame cache sees it: loaded from the store on a decode thread, and each
    /// frame prepared with its answers (``FrameResponses``) as it enters the cache.
    func cacheable(_ record: StoredImage) -> CacheableImage {
        let store = self.store
        let level = settings.cache.pngCompressionLevel
        return CacheableImage(
            id: Self.cacheKey(record), frameCount: record.metadata.frameCount,
            canvasWidth: record.metadata.width, canvasHeight: record.metadata.height,
            load: { try store.loadImage(record) },
            prepare: { index, png in
                FrameResponses(
                    record: record, index: index, png: png,
                    etag: Self.frameETag(record, index, level: level))
            })
    }

    /// Names the frame's bytes: the image's content, the index, the deflate level and the
    /// revision of Flipbook's output (``AnimatedImage/outputRevision``).
    func frameETag(_ record: StoredImage, _ index: Int) -> String {
        Self.frameETag(record, index, level: settings.cache.pngCompressionLevel)
    }

    static func frameETag(_ record: StoredImage, _ index: Int, level: Int) -> String {
        "\"f-\(record.sha256.prefix(32))-\(index)-z\(level)-r\(AnimatedImage.outputRevision)\""
    }

    /// The record of `id` when the store knows it without waiting and the original is local: the
    /// hot path, looked up in the event loop's own copy of the records.
    private func recordAtOnce(_ id: String, _ request: HTTPRequest) -> StoredImage? {
        guard case .found(let record, _) = store.quickLookup(id, reader: request.loop),
            store.hasLocalOriginal(record)
        else { return nil }
        return record
    }

    func frame(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        let id = request.pathParameters["id"] ?? ""
        let text = request.pathParameters["index"] ?? ""
        guard let index = Self.parseNonNegative(text) else {
            return .now(.problem(.badRequest, detail: "The frame index '\(text)' is not a non-negative integer."))
        }
        if let record = recordAtOnce(id, request) {
            return serveFrame(request, responder, record: record, index: index, contentLocation: false)
        }
        return withRecord(id, responder, needsOriginal: true) { [self] record, _ in
            guard let record else { return .now(Self.unknownImage(id)) }
            return serveFrame(request, responder, record: record, index: index, contentLocation: false)
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
        if let record = recordAtOnce(id, request) {
            return serveFrame(
                request, responder, record: record, index: Self.frameIndex(record, at: time),
                contentLocation: true)
        }
        return withRecord(id, responder, needsOriginal: true) { [self] record, _ in
            guard let record else { return .now(Self.unknownImage(id)) }
            return serveFrame(
                request, responder, record: record, index: Self.frameIndex(record, at: time),
                contentLocation: true)
        }
    }

    /// The frame shown at `time` of `record`'s playback.
    static func frameIndex(_ record: StoredImage, at time: PlaybackTime) -> Int {
        let frames = record.metadata.frames
        return Timeline(rawDelaysMs: frames.map(\.rawDelayMs), playCount: record.metadata.playCount).frameIndex(at: time)
    }

    private func serveFrame(
        _ request: HTTPRequest, _ responder: HTTPResponder, record: StoredImage, index: Int,
        contentLocation: Bool
    ) -> HTTPHandlerResult {
        let count = record.metadata.frameCount
        guard index < count else {
            return .now(
                .problem(
                    .notFound,
                    detail: "Image '\(record.id)' has \(count) frame\(count == 1 ? "" : "s"); "
                        + "there is no frame \(index)."))
        }
        let location: HTTPHeaders = contentLocation ? ["Content-Location": "/frames/\(record.id)/\(index)"] : HTTPHeaders()
        // A cached frame: its answers were encoded when it entered the cache; nothing is built.
        if let hit = cache.cachedFrame(id: Self.cacheKey(record), index: index, reader: request.loop),
            let responses = hit.attachment as? FrameResponses
        {
            if request.headers.ifNoneMatchMatches(responses.etag) {
                return .now(HTTPResponse(responses.notModified(for: record), extraHeaders: location))
            }
            return .now(HTTPResponse(responses.ok(for: record), extraHeaders: location))
        }
        let etag = frameETag(record, index)
        let cacheControl = record.isImmutable ? Self.immutableCacheControl : "no-cache"
        var headers = FrameResponses.headers(record, index: index, etag: etag, cacheControl: cacheControl)
        for field in location { headers.add(name: field.name, value: field.value) }
        if Self.matches(request, etag: etag) {
            var notModified = Self.notModified(etag: etag, cacheControl: cacheControl)
            if contentLocation { notModified.headers.add(name: "Content-Location", value: "/frames/\(record.id)/\(index)") }
            // Still tell the cache where the client is, so decode-ahead follows a revalidating player.
            _ = cache.frame(cacheable(record), index: index) { _ in }
            return .now(notModified)
        }
        let logger = self.logger
        let frameHeaders = headers
        let store = self.store
        if let frame = cache.frame(
            cacheable(record), index: index,
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
