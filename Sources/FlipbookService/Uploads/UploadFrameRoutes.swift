import AnimatedImage
import Dispatch
import FrameCache
import HTTPServer
import Logging
import SystemResources

/// `GET /frames/{uploadId}/{k}` and `GET /frames/{uploadId}?t=` while an upload session's body
/// arrives: frame k as soon as its data is in (composited from the prefix received so far, so
/// the bytes the finished image will serve), `Cache-Control: no-store`. A frame not in yet
/// waits up to `Prefer: wait=N` seconds (RFC 7240; at most `uploads.maxWaitSeconds`, which is
/// also the wait without the preference), then gets 503 with `Retry-After`. Once the session is
/// stored its frames redirect (303) to the image's; a failed session answers its problem. An
/// AVIF frame holds one of its client's encode slots from its request to its answer
/// (``ClientEncodeLimit``: 429 beyond), as a stored image's does.
///
/// A class: every image's frame request asks it first (``frame(_:_:_:target:requested:)``), and
/// as a struct of the frame routes (with the settings in it, 896 bytes) it was copied whole for
/// each such call.
final class UploadFrameRoutes: Sendable {
    let tracker: UploadTracker
    let serving: FrameServing
    let settings: FlipbookSettings
    /// Where the waits that run out are answered 503 (never on the shared pool).
    private let deadlines = RequestDeadlines(label: "flipbook.upload-waits")

    init(tracker: UploadTracker, serving: FrameServing, settings: FlipbookSettings) {
        (self.tracker, self.serving, self.settings) = (tracker, serving, settings)
    }

    private var sessions: UploadSessions { tracker.sessions }

    /// The answer when `id` is an upload session's (its frame, or 429 when the id is valid but no
    /// session fits here); nil when it is not one — every image's frame request asks, so that
    /// case makes nothing (``UploadSessions/lookup(_:)`` tells it by the id's length).
    func frame(
        _ id: String, _ request: HTTPRequest, _ responder: HTTPResponder, target: FrameWaiter.Target,
        requested: RequestedRendition
    ) -> HTTPHandlerResult? {
        switch sessions.lookup(id) {
        case .found(let session): frame(request, responder, session: session, target: target, requested: requested)
        case .full: .now(.problem(UploadTracker.sessionsFull(settings.uploads)))
        case .unknown: nil
        }
    }

    private func frame(
        _ request: HTTPRequest, _ responder: HTTPResponder, session: UploadSession, target: FrameWaiter.Target,
        requested: RequestedRendition
    ) -> HTTPHandlerResult {
        switch session.phase {
        case .stored(let imageID):
            var location = "/frames/\(imageID)"
            if case .index(let index) = target { location += "/\(index)" }
            if let mark = request.target.firstIndex(of: "?") { location += request.target[mark...] }
            return .now(HTTPResponse(status: .seeOther, headers: ["Location": location, "Cache-Control": "no-store"]))
        case .failed(let status, let detail):
            return .now(.problem(status, detail: detail, headers: ["Cache-Control": "no-store"]))
        case .created, .receiving:
            break
        }
        guard sessions.waiting.load(ordering: .relaxed) < settings.cache.maxWaitingRequests else {
            return .now(
                .problem(
                    .tooManyRequests, detail: "Too many frame requests are waiting (cache.maxWaitingRequests); retry shortly.",
                    headers: ["Retry-After": "1", "Cache-Control": "no-store"]))
        }
        // An AVIF frame holds one of its client's slots until it is answered, its wait included.
        let client = serving.avifEncodes.client(of: request, format: requested.request.format)
        if let refusal = serving.avifEncodes.refusal(client, extra: ["Cache-Control": "no-store"]) { return .now(refusal) }
        let responder = serving.avifEncodes.releasing(client, responder)
        let wait = Self.preferredWait(request, cap: settings.uploads.maxWaitSeconds)
        sessions.waiting.add(1, ordering: .relaxed)
        let waiter = FrameWaiter(target: target) { [self] resolution in
            sessions.waiting.subtract(1, ordering: .relaxed)
            // One session's frames are made in turn on its own queue: readers of one upload wait
            // in line there, not on a lock holding a thread each.
            session.renderer.queue.async { [self] in
                resolve(request, responder, session: session, target: target, requested: requested, resolution)
            }
        }
        if let (phase, progress) = session.wait(waiter) {
            waiter.answer(.ready(phase, progress))
            return .later
        }
        deadlines.after(wait) {
            if session.withdraw(waiter) { waiter.answer(.timedOut) }
        }
        // Bytes may have arrived since the last index (nobody waited then).
        if session.claimIndexing() { tracker.index(session) }
        return .later
    }

    /// The seconds a frame request may wait: its `Prefer: wait=N`, at most `cap`; `cap` without it.
    static func preferredWait(_ request: HTTPRequest, cap: Double) -> Double {
        for value in request.headers.values(for: "Prefer") {
            for preference in value.split(separator: ",") {
                let parts = preference.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces() }
                guard parts.count == 2, parts[0].lowercased() == "wait", let seconds = Int(parts[1]), seconds >= 0 else {
                    continue
                }
                return min(Double(seconds), cap)
            }
        }
        return cap
    }

    private func resolve(
        _ request: HTTPRequest, _ responder: HTTPResponder, session: UploadSession, target: FrameWaiter.Target,
        requested: RequestedRendition, _ resolution: FrameWaiter.Resolution
    ) {
        let progress: UploadSession.Progress
        switch resolution {
        case .timedOut:
            let what =
                switch target {
                case .index(let index): "Frame \(index)"
                case .time(let time): "The frame at \(time) ms"
                }
            responder.respond(
                .problem(
                    .serviceUnavailable, detail: "\(what) of upload '\(session.id)' has not arrived yet; retry shortly.",
                    headers: ["Retry-After": "1", "Cache-Control": "no-store"]))
            return
        case .response(let response):
            responder.respond(response)
            return
        case .ready(.failed(let status, let detail), _):
            responder.respond(.problem(status, detail: detail, headers: ["Cache-Control": "no-store"]))
            return
        case .ready(.stored(let imageID), _):
            serveStored(request, responder, imageID: imageID, target: target, requested: requested)
            return
        case .ready(_, let ready):
            progress = ready
        }
        guard let image = progress.image, let index = FrameWaiter.index(of: target, in: progress) else {
            responder.respond(
                .problem(.serviceUnavailable, detail: "The frame has not arrived yet.", headers: ["Retry-After": "1"]))
            return
        }
        let rendition: FrameRendition
        switch serving.renditions.rendition(requested, canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight) {
        case .success(let value): rendition = value
        case .failure(let error):
            responder.respond(.problem(.badRequest, detail: error.detail, headers: ["Cache-Control": "no-store"]))
            return
        }
        let bytes: FrameBytes
        do {
            bytes = try session.renderer.frame(index, of: image, rendition: rendition)
        } catch {
            responder.respond(
                .problem(
                    .unprocessableContent, detail: "The frame cannot be decoded: \(error).",
                    headers: ["Cache-Control": "no-store"]))
            return
        }
        let contentLocation: String? =
            if case .time = target { FrameAnswer.contentLocation(request, id: session.id, index: index) } else { nil }
        let answer = FrameAnswer(
            upload: session.id, image: image, index: index, rendition: rendition,
            pngLevel: serving.frames.pngLevel,
            extra: FrameAnswer.extraHeaders(negotiated: requested.negotiated, contentLocation: contentLocation))
        responder.respond(answer.ok(bytes))
    }

    /// A waiting request whose session was stored meanwhile: its frame from the stored image
    /// (through the frame cache, as `/frames/{id}` serves it), still `no-store` (the request
    /// named the session, an alias that expires); 404 past the image's last frame.
    private func serveStored(
        _ request: HTTPRequest, _ responder: HTTPResponder, imageID: String, target: FrameWaiter.Target,
        requested: RequestedRendition
    ) {
        let result = serving.lookup.withKnownRecord(imageID, responder, needsOriginal: true) { [self] record, _ in
            let count = record.metadata.frameCount
            let index = FrameRoutes.frameIndex(record, of: target)
            guard index < count else {
                return .now(
                    .problem(
                        .notFound,
                        detail: "The upload ended with \(count) frame\(count == 1 ? "" : "s"); there is no frame \(index).",
                        headers: ["Cache-Control": "no-store"]))
            }
            let rendition: FrameRendition
            switch serving.renditions.rendition(requested, of: record) {
            case .success(let value): rendition = value
            case .failure(let error): return .now(.problem(.badRequest, detail: error.detail))
            }
            let contentLocation: String? =
                if case .time = target { FrameAnswer.contentLocation(request, id: record.id, index: index) } else { nil }
            let answer = serving.frames.answer(
                record, index: index, rendition: rendition, caching: .noStore,
                extra: FrameAnswer.extraHeaders(negotiated: requested.negotiated, contentLocation: contentLocation))
            let logger = serving.logger
            if let frame = serving.cache.frame(
                serving.frames.cacheable(record, rendition), index: index,
                completion: { responder.respond(answer.response($0, logger: logger)) })
            {
                return .now(answer.ok(frame.bytes))
            }
            return .later
        }
        if case .now(let response) = result { responder.respond(response) }
    }
}
