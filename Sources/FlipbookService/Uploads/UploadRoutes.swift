import AnimatedImage
import Foundation
import HTTPServer

/// `POST /uploads` (a new session), `PUT /uploads/{uploadId}` (its body) and
/// `GET /uploads/{uploadId}` (its progress: the metadata of the frames in so far; then a 303 to
/// the stored image, or the problem that ended it).
extension FlipbookAPI {
    func createUpload(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        if let refusal = Authorization.check(
            request, token: settings.auth.uploadToken, what: "Uploading", disabledWhenEmpty: false)
        {
            return .now(Self.problem(refusal))
        }
        guard request.body.isEmpty else {
            return .now(
                .problem(.badRequest, detail: "POST /uploads takes no body; send the bytes with PUT /uploads/{uploadId}."))
        }
        // With a shared key the session is made by the replica the id is routed to; without
        // one, only this process can verify the id, so the session is made here and now.
        let minted = uploads.hasSharedKey ? uploads.mint() : uploads.create()?.id
        guard let id = minted else { return .now(Self.problem(Self.sessionsFull(settings.uploads))) }
        var headers = HTTPHeaders()
        headers.add(name: "Location", value: "/uploads/\(id)")
        headers.add(name: "Cache-Control", value: "no-store")
        return .now(Self.json(Self.encodeJSON(["uploadId": id]), status: .created, headers: headers))
    }

    /// 429: `uploads.maxSessions` sessions are open on this replica.
    static func sessionsFull(_ settings: FlipbookSettings.Uploads) -> HTTPError {
        HTTPError(
            .tooManyRequests,
            detail: "\(settings.maxSessions) upload sessions are in progress (uploads.maxSessions); retry shortly.",
            headers: ["Retry-After": "1"])
    }

    /// The session of a request's id, or the response that refuses it: 404 (no such session,
    /// or an id that is invalid or expired), 429 (valid, but no room for it here).
    func uploadSession(_ id: String) -> Result<UploadSession, HTTPError> {
        switch uploads.lookup(id) {
        case .found(let session): .success(session)
        case .unknown: .failure(HTTPError(.notFound, detail: "No upload session '\(id)' (it may have expired)."))
        case .full: .failure(Self.sessionsFull(settings.uploads))
        }
    }

    /// The sink for `PUT /uploads/{uploadId}`.
    func uploadSessionSink(_ request: HTTPRequest, _ responder: HTTPResponder) -> any HTTPBodySink {
        if let refusal = Authorization.check(
            request, token: settings.auth.uploadToken, what: "Uploading", disabledWhenEmpty: false)
        {
            return RefusingSink(refusal)
        }
        let id = request.pathParameters["uploadId"] ?? ""
        let session: UploadSession
        switch uploadSession(id) {
        case .success(let found): session = found
        case .failure(let refusal): return RefusingSink(refusal)
        }
        let upload: UploadFile
        do {
            upload = try store.beginUpload()
        } catch {
            logger.error("cannot start an upload", metadata: ["error": "\(error)"])
            return RefusingSink(
                HTTPError(
                    .serviceUnavailable, detail: "Storage is not writable right now; retry shortly.",
                    headers: ["Retry-After": String(Self.storageRetryAfterSeconds)]))
        }
        guard session.beginReceiving(path: upload.path) else {
            upload.discard()
            return RefusingSink(HTTPError(.conflict, detail: "Upload session '\(id)' has received its body already."))
        }
        return UploadSink(
            api: self, upload: upload, name: nil,
            displayName: DisplayName.from(contentDisposition: request.headers["Content-Disposition"]), session: session,
            responder: responder, requestID: request.requestID)
    }

    func uploadStatus(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        let id = request.pathParameters["uploadId"] ?? ""
        let session: UploadSession
        switch uploadSession(id) {
        case .success(let found): session = found
        case .failure(let refusal): return .now(Self.problem(refusal))
        }
        switch session.phase {
        case .stored(let imageID):
            var headers = HTTPHeaders()
            headers.add(name: "Location", value: "/images/\(imageID)")
            headers.add(name: "Cache-Control", value: "no-store")
            return .now(HTTPResponse(status: .seeOther, headers: headers))
        case .failed(let status, let detail):
            return .now(.problem(status, detail: detail, headers: ["Cache-Control": "no-store"]))
        case .created, .receiving:
            break
        }
        ingestQueue.async { [self] in
            // Index what is in now, so frameCount counts every frame whose bytes have arrived
            // (unless an index runs already: then its result, a moment old, is the answer). The
            // bytes and the frames reported are those of one index, never of two moments.
            if let source = session.prefixSource, source.bytes > session.progress.indexedBytes, session.claimIndexing() {
                runIndexing(session)
            }
            let progress = session.progress
            let document = UploadProgressDocument(
                uploadId: session.id, bytesReceived: progress.indexedBytes, image: progress.image)
            responder.respond(Self.json(Self.encodeJSON(document), headers: ["Cache-Control": "no-store"]))
        }
        return .later
    }

    /// Indexes the prefix of an upload in `path` with the ordinary indexers (complete frames
    /// only); nil when it is not an image (yet), with the byte count it had.
    static func indexPrefix(_ path: String, limits: DecodeLimits) -> (AnimatedImage?, Int) {
        guard let prefix = UploadPrefix.map(path) else { return (nil, 0) }
        let image = try? AnimatedImage(bytes: prefix.bytes, limits: limits, verification: .structural)
        return (image, prefix.fileBytes)
    }

    /// Indexes an upload's prefix for its waiters, off the event loop (the caller claimed the
    /// indexing).
    func indexUpload(_ session: UploadSession) {
        DispatchQueue.global(qos: .userInitiated).async { [self] in runIndexing(session) }
    }

    /// Indexes the prefix received so far, answers the waiters whose frame it holds, and again
    /// while the body grows and someone waits; then ends the claim.
    func runIndexing(_ session: UploadSession) {
        while let source = session.prefixSource {
            let (image, bytes) = Self.indexPrefix(source.path, limits: store.limits)
            let (ready, progress) = session.offer(image, bytes: bytes)
            for waiter in ready { waiter.answer(.ready(.receiving, progress)) }
            if !session.finishIndexing(bytes: max(bytes, source.bytes)) { return }
        }
        _ = session.finishIndexing(bytes: Int.max)
    }

    /// Ends `session` in `phase`: its waiters get their frame (stored), the uploader's problem
    /// (`response`, when it refused the body) or the session's; its renderer lets go of its canvas.
    /// Stored, the frames made while the body arrived become the image's in the frame cache
    /// first, so neither the waiters nor the readers following the alias decode them again.
    func endUpload(_ session: UploadSession, _ phase: UploadSession.Phase, answering response: HTTPResponse?) {
        if case .stored(let imageID) = phase, let record = store.record(imageID) {
            cache.adoptStaged(owner: session.id) { cacheable(record, $0) }
        }
        defer { session.renderer.release() }
        guard let waiters = session.end(phase, now: UploadSessions.now()) else { return }
        for waiter in waiters {
            if case .failed(let status, let detail) = phase {
                var problem = response ?? .problem(status, detail: detail)
                problem.headers.set(name: "Cache-Control", value: "no-store")
                waiter.answer(.response(problem))
            } else {
                waiter.answer(.ready(phase, UploadSession.Progress()))
            }
        }
        if case .failed = phase {
            logger.info("upload session ended", metadata: ["uploadId": "\(session.id)", "phase": "\(phase)"])
        }
    }
}

extension FlipbookAPI {
    /// What a session becomes after the commit answered `response`: an alias of the image it
    /// names, 422 for a body that is no image Flipbook serves (415 or 422 to the uploader), else
    /// 410 (nothing was stored).
    static func sessionPhase(after response: HTTPResponse) -> UploadSession.Phase {
        let detail = problemDetail(response)
        switch response.status.code {
        case 200, 201:
            let location = response.headers["Location"] ?? ""
            return .stored(id: String(location.dropFirst("/images/".count)))
        case 415, 422:
            return .failed(status: .unprocessableContent, detail: detail)
        default:
            return .failed(status: .gone, detail: "The upload was not stored: \(detail)")
        }
    }

    /// What a session becomes when its body failed before its end: nothing was stored.
    static func sessionPhase(after failure: HTTPBodyFailure) -> UploadSession.Phase {
        switch failure {
        case .tooLarge:
            .failed(status: .contentTooLarge, detail: "The upload exceeded server.maxUploadBytes; nothing was stored.")
        case .timedOut:
            .failed(status: .gone, detail: "The upload stalled past the body idle timeout; nothing was stored.")
        case .connectionClosed, .malformed, .sinkFailed:
            .failed(status: .gone, detail: "The upload was cut off before its end; nothing was stored.")
        }
    }

    /// The `detail` of a problem document.
    static func problemDetail(_ response: HTTPResponse) -> String {
        let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return object?["detail"] as? String ?? response.status.reasonPhrase
    }
}

/// The answer of `GET /uploads/{uploadId}` while the body arrives: the metadata of the frames in
/// so far (when the prefix is an image yet), `complete: false`, the bytes received.
struct UploadProgressDocument: Encodable {
    var uploadId: String
    var bytesReceived: Int
    var image: AnimatedImage?

    private enum Keys: String, CodingKey { case uploadId, complete, bytesReceived, frameCount }

    func encode(to encoder: any Encoder) throws {
        if let image { try MetadataDocument(id: nil, metadata: ImageMetadata(image: image)).encode(to: encoder) }
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(uploadId, forKey: .uploadId)
        try container.encode(false, forKey: .complete)
        try container.encode(bytesReceived, forKey: .bytesReceived)
        if image == nil { try container.encode(0, forKey: .frameCount) }
    }
}
