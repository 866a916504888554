import Dispatch
import FoundationEssentials
import Glibc
import HTTPServer
import ImageStorage

/// Receives an upload's body straight into a temporary file of the store (hashing it on the
/// way), then hands the file to the ingest workers to be verified and committed; the client gets
/// 201/200 with the metadata, or a problem document saying why the image was refused.
///
/// The body of `POST /images` and `PUT /images/{name}`, and of an upload session's
/// `PUT /uploads/{uploadId}`: then the session's waiting readers are told as the body grows, and
/// the session ends with the upload — an alias of the stored image, or the problem every waiter
/// and later request gets (410 for a body cut off; nothing of it is kept).
final class UploadSink: HTTPBodySink, @unchecked Sendable {
    private let ingest: ImageIngest
    private let upload: UploadFile
    private let name: String?
    /// The file's name from `Content-Disposition`, for display.
    private let displayName: String?
    /// The upload session the body is for (`PUT /uploads/{uploadId}`), if any, and what follows it.
    private let session: (session: UploadSession, tracker: UploadTracker)?
    private let responder: HTTPResponder
    /// The request's id, for the error log.
    private let requestID: HTTPRequestID

    init(
        ingest: ImageIngest, upload: UploadFile, name: String?, displayName: String? = nil,
        session: (session: UploadSession, tracker: UploadTracker)? = nil, responder: HTTPResponder,
        requestID: HTTPRequestID
    ) {
        self.ingest = ingest
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
            ingest.logger.error("upload write failed", metadata: ["error": "\(error)", "requestID": "\(requestID)"])
            throw HTTPError(.internalServerError, detail: "The upload could not be written to disk.")
        }
        if case (let session, let tracker)? = session, session.received(total: upload.byteCount) { tracker.index(session) }
    }

    func finish() -> HTTPHandlerResult {
        guard upload.byteCount > 0 else {
            upload.discard()
            let detail = "The request body is empty; send the image's bytes."
            if case (let session, let tracker)? = session {
                tracker.end(session, .failed(status: .unprocessableContent, detail: detail), answering: nil)
            }
            return .now(.problem(.badRequest, detail: detail))
        }
        let (ingest, upload, name, session) = (self.ingest, self.upload, self.name, self.session)
        let (displayName, responder, requestID) = (self.displayName, self.responder, self.requestID)
        ingest.workers.submit {
            let response = ingest.commit(upload, name: name, requestID: requestID, displayName: displayName)
            if case (let session, let tracker)? = session {
                tracker.end(session, UploadTracker.phase(after: response), answering: response)
            }
            responder.respond(response)
        }
        return .later
    }

    func fail(_ reason: HTTPBodyFailure) {
        upload.discard()
        if case (let session, let tracker)? = session { tracker.end(session, UploadTracker.phase(after: reason), answering: nil) }
    }
}

/// The sink of `POST /images` and `PUT /images/{name}`, which makes the real one (``UploadSink``
/// with its temporary file, or the ``RefusingSink`` of a 503 when storage cannot take a file) at
/// the body's first byte rather than when the head arrives: a request refused before its body
/// (a malformed chunk-size line, a connection closed after the head) then
/// costs no file made and removed — about ten system calls and an inode, most of what a hostile
/// client's refused `POST` cost the server. Every answer stays as it was: storage known to be
/// unreachable is still refused when the head arrives (``ImageIngest/refusalBeforeBody()``), a
/// file that cannot be made still answers 503 after at most ``RefusingSink/discardLimit`` bytes
/// of body, and an empty body makes the sink at its end, so it is answered as before.
final class DeferredUploadSink: HTTPBodySink, @unchecked Sendable {
    private let make: () -> any HTTPBodySink
    private var made: (any HTTPBodySink)?

    init(_ make: @escaping () -> any HTTPBodySink) {
        self.make = make
    }

    private var sink: any HTTPBodySink {
        if let made { return made }
        let sink = make()
        made = sink
        return sink
    }

    func write(_ chunk: UnsafeRawBufferPointer) throws { try sink.write(chunk) }

    func finish() -> HTTPHandlerResult { sink.finish() }

    func fail(_ reason: HTTPBodyFailure) { made?.fail(reason) }
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
        response = .problem(refusal)
        early = refusal
    }

    func write(_ chunk: UnsafeRawBufferPointer) throws {
        discarded += chunk.count
        if discarded > Self.discardLimit { throw early }
    }

    func finish() -> HTTPHandlerResult { .now(response) }

    func fail(_ reason: HTTPBodyFailure) {}
}
