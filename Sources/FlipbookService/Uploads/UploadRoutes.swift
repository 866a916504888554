import AnimatedImage
import Dispatch
import FoundationEssentials
import HTTPServer
import ImageStorage

/// `POST /uploads` (a new session), `PUT /uploads/{uploadId}` (its body) and
/// `GET /uploads/{uploadId}` (its progress: the metadata of the frames in so far; then a 303 to
/// the stored image, or the problem that ended it). Frames of a session are
/// ``UploadFrameRoutes``'s.
struct UploadRoutes: Sendable {
    let tracker: UploadTracker
    let ingest: ImageIngest
    let settings: FlipbookSettings

    private var uploads: UploadSessions { tracker.sessions }

    func register(in router: inout Router) {
        router.post("/uploads", maxBodyBytes: 4096) { createUpload($0, $1) }
        router.stream(.PUT, "/uploads/:uploadId", maxBodyBytes: settings.server.maxUploadBytes) { request, responder in
            uploadSessionSink(request, responder)
        }
        router.get("/uploads/:uploadId") { uploadStatus($0, $1) }
    }

    func createUpload(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        if let refusal = Authorization.check(
            request, token: settings.auth.uploadToken, what: "Uploading", disabledWhenEmpty: false)
        {
            return .now(.problem(refusal))
        }
        guard request.body.isEmpty else {
            return .now(
                .problem(.badRequest, detail: "POST /uploads takes no body; send the bytes with PUT /uploads/{uploadId}."))
        }
        // With a shared key the session is made by the replica the id is routed to; without
        // one, only this process can verify the id, so the session is made here and now.
        let minted = uploads.hasSharedKey ? uploads.mint() : uploads.create()?.id
        guard let id = minted else { return .now(.problem(UploadTracker.sessionsFull(settings.uploads))) }
        var headers = HTTPHeaders()
        headers.add(name: "Location", value: "/uploads/\(id)")
        headers.add(name: "Cache-Control", value: "no-store")
        return .now(.json(JSONBody.encode(["uploadId": id]), status: .created, headers: headers))
    }

    /// The session of a request's id, or the response that refuses it: 404 (no such session,
    /// or an id that is invalid or expired), 429 (valid, but no room for it here).
    func uploadSession(_ id: String) -> Result<UploadSession, HTTPError> {
        switch uploads.lookup(id) {
        case .found(let session): .success(session)
        case .unknown: .failure(HTTPError(.notFound, detail: "No upload session '\(id)' (it may have expired)."))
        case .full: .failure(UploadTracker.sessionsFull(settings.uploads))
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
        switch ingest.beginUpload() {
        case .success(let file): upload = file
        case .failure(let refusal): return RefusingSink(refusal)
        }
        guard session.beginReceiving(path: upload.path) else {
            upload.discard()
            return RefusingSink(HTTPError(.conflict, detail: "Upload session '\(id)' has received its body already."))
        }
        return UploadSink(
            ingest: ingest, upload: upload, name: nil,
            displayName: DisplayName.from(contentDisposition: request.headers["Content-Disposition"]),
            session: (session, tracker), responder: responder, requestID: request.requestID)
    }

    func uploadStatus(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        let id = request.pathParameters["uploadId"] ?? ""
        let session: UploadSession
        switch uploadSession(id) {
        case .success(let found): session = found
        case .failure(let refusal): return .now(.problem(refusal))
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
        session.indexQueue.async {
            // Index what is in now, so frameCount counts every frame whose bytes have arrived
            // (unless an index runs already: then its result, a moment old, is the answer). The
            // bytes and the frames reported are those of one index, never of two moments.
            if let source = session.prefixSource, source.bytes > session.progress.indexedBytes, session.claimIndexing() {
                tracker.runIndexing(session)
            }
            let progress = session.progress
            let document = UploadProgressDocument(
                uploadId: session.id, bytesReceived: progress.indexedBytes, image: progress.image)
            responder.respond(.json(JSONBody.encode(document), headers: ["Cache-Control": "no-store"]))
        }
        return .later
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
