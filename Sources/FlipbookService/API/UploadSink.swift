import Foundation
import HTTPServer

/// Receives an upload's body straight into a temporary file of the store (hashing it on the
/// way), then hands the file to the ingest queue to be verified and committed; the client gets
/// 201/200 with the metadata, or a problem document saying why the image was refused.
///
/// The body of `POST /images` and `PUT /images/{name}`, and of an upload session's
/// `PUT /uploads/{uploadId}`: then the session's waiting readers are told as the body grows, and
/// the session ends with the upload — an alias of the stored image, or the problem every waiter
/// and later request gets (410 for a body cut off; nothing of it is kept).
final class UploadSink: HTTPBodySink, @unchecked Sendable {
    private let api: FlipbookAPI
    private let upload: UploadFile
    private let name: String?
    /// The file's name from `Content-Disposition`, for display.
    private let displayName: String?
    /// The upload session the body is for (`PUT /uploads/{uploadId}`), if any.
    private let session: UploadSession?
    private let responder: HTTPResponder
    /// The request's id, for the error log.
    private let requestID: HTTPRequestID

    init(
        api: FlipbookAPI, upload: UploadFile, name: String?, displayName: String? = nil, session: UploadSession? = nil,
        responder: HTTPResponder, requestID: HTTPRequestID
    ) {
        self.api = api
        self.upload = upload
        self.name = name
        self.displayName = displayName
        self.session = session
        self.responder = responder
        self.requestID = requestID
    }

    func write(_ chunk: UnsafeRawBufferPointer) throws {
        do {
            try upload.append(chunk)
        } catch {
            api.logger.error("upload write failed", metadata: ["error": "\(error)", "requestID": "\(requestID)"])
            throw HTTPError(.internalServerError, detail: "The upload could not be written to disk.")
        }
        if let session, session.received(total: upload.byteCount) { api.indexUpload(session) }
    }

    func finish() -> HTTPHandlerResult {
        guard upload.byteCount > 0 else {
            upload.discard()
            let detail = "The request body is empty; send the image's bytes."
            if let session { api.endUpload(session, .failed(status: .unprocessableContent, detail: detail), answering: nil) }
            return .now(.problem(.badRequest, detail: detail))
        }
        let (api, upload, name, session) = (self.api, self.upload, self.name, self.session)
        let (displayName, responder, requestID) = (self.displayName, self.responder, self.requestID)
        api.ingestQueue.async {
            let response = api.commitUpload(upload, name: name, requestID: requestID, displayName: displayName)
            if let session { api.endUpload(session, FlipbookAPI.sessionPhase(after: response), answering: response) }
            responder.respond(response)
        }
        return .later
    }

    func fail(_ reason: HTTPBodyFailure) {
        upload.discard()
        if let session { api.endUpload(session, FlipbookAPI.sessionPhase(after: reason), answering: nil) }
    }
}

/// A sink that refuses an upload (auth or a bad name). A small body is read and dropped so the
/// client gets the whole answer (with `WWW-Authenticate`) on a connection that stays usable; past
/// `discardLimit` bytes the server answers at once and closes instead of reading megabytes nobody
/// wants.
final class RefusingSink: HTTPBodySink, @unchecked Sendable {
    static let discardLimit = 64 * 1024
    /// The answer once the body is read.
    private let response: HTTPResponse
    /// The same answer, for the server to send when it stops reading early.
    private let early: HTTPError
    private var discarded = 0

    init(_ refusal: HTTPError) {
        response = FlipbookAPI.problem(refusal)
        early = refusal
    }

    func write(_ chunk: UnsafeRawBufferPointer) throws {
        discarded += chunk.count
        if discarded > Self.discardLimit { throw early }
    }

    func finish() -> HTTPHandlerResult { .now(response) }

    func fail(_ reason: HTTPBodyFailure) {}
}

extension FlipbookAPI {
    /// The sink for `POST /images` (name nil) or `PUT /images/{name}`.
    func uploadSink(_ request: HTTPRequest, _ responder: HTTPResponder, name: String?) -> any HTTPBodySink {
        if let refusal = Authorization.check(
            request, token: settings.auth.uploadToken, what: "Uploading",
            disabledWhenEmpty: false)
        {
            return RefusingSink(refusal)
        }
        if let name, let why = ImageID.validateName(name) {
            return RefusingSink(HTTPError(.badRequest, detail: "Invalid image name '\(name)': \(why)."))
        }
        if SignedRequestPolicy.isURLSource(request) {
            return SourceRequestSink(api: self, request: request, name: name, responder: responder)
        }
        do {
            return UploadSink(
                api: self, upload: try store.beginUpload(), name: name,
                displayName: DisplayName.from(contentDisposition: request.headers["Content-Disposition"]), responder: responder,
                requestID: request.requestID)
        } catch {
            logger.error("cannot start an upload", metadata: ["error": "\(error)"])
            let detail =
                if case ImageStore.StoreError.unavailable = error {
                    "Storage cannot be reached right now; retry shortly."
                } else {
                    "Storage is not writable right now; retry shortly."
                }
            return RefusingSink(
                HTTPError(
                    .serviceUnavailable, detail: detail,
                    headers: ["Retry-After": String(Self.storageRetryAfterSeconds)]))
        }
    }

    /// Verifies and stores a finished upload (on the ingest queue) and says how it went.
    func commitUpload(
        _ upload: UploadFile, name: String?, requestID: HTTPRequestID, origin: SourceOrigin? = nil, displayName: String? = nil
    ) -> HTTPResponse {
        let anchors = SeekAnchors(cache: cache)
        defer { anchors.discard() }  // what was not adopted
        do {
            let (record, created) = try store.commit(
                upload, name: name, origin: origin, displayName: displayName, visit: anchors.visit)
            anchors.adopt { cacheable(record, $0) }
            if created { derived.keepAnchors(anchors.frames, of: record.sha256) }
            var headers = HTTPHeaders()
            headers.add(name: "Location", value: "/images/\(record.id)")
            headers.add(name: "ETag", value: Self.metadataETag(record))
            let body = store.recordAndMetadata(record.id)?.1 ?? (try? ImageStore.encodeMetadata(of: record)) ?? []
            return Self.json(body, status: created ? .created : .ok, headers: headers)
        } catch let error as ImageStore.StoreError {
            switch error {
            case .unsupportedFormat(let why):
                return .problem(.unsupportedMediaType, detail: "Unsupported image format: \(why).")
            case .undecodable(let why):
                return .problem(.unprocessableContent, detail: "The image cannot be served: \(why).")
            case .readOnly(let why):
                return .problem(.conflict, detail: why + ".")
            case .busy(let why):
                return .problem(
                    .tooManyRequests, detail: "The image cannot be verified now: \(why); retry shortly.",
                    headers: ["Retry-After": "1"])
            case .unavailable(let why):
                logger.warning(
                    "upload not stored: storage unavailable",
                    metadata: ["error": "\(why)", "requestID": "\(requestID)"])
                return Self.storageUnavailable("The image could not be stored: storage cannot be reached right now")
            case .io(let why):
                logger.error("upload not stored", metadata: ["error": "\(why)", "requestID": "\(requestID)"])
                return .problem(.internalServerError, detail: "The image could not be stored.")
            }
        } catch {
            logger.error("upload not stored", metadata: ["error": "\(error)", "requestID": "\(requestID)"])
            return .problem(.internalServerError, detail: "The image could not be stored.")
        }
    }
}
