import Foundation
import HTTPServer

/// `PUT /uploads/{uploadId}`: the body goes to a temporary file as for `POST /images`, the
/// session's waiting readers are told as it grows, and when it is complete it is verified and
/// stored as `POST /images` would, and the session ends: an alias of the stored image, or the
/// problem every waiter and later request gets. A body cut off (client gone, idle timeout) ends
/// the session with 410; nothing of it is kept.
final class UploadSessionSink: HTTPBodySink, @unchecked Sendable {
    private let api: FlipbookAPI
    private let session: UploadSession
    private let upload: UploadFile
    private let responder: HTTPResponder
    private let requestID: HTTPRequestID
    /// The file's name from `Content-Disposition`, for display.
    private let displayName: String?

    init(
        api: FlipbookAPI, session: UploadSession, upload: UploadFile, displayName: String?, responder: HTTPResponder,
        requestID: HTTPRequestID
    ) {
        self.displayName = displayName
        self.api = api
        self.session = session
        self.upload = upload
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
        if session.received(total: upload.byteCount) { api.indexUpload(session) }
    }

    func finish() -> HTTPHandlerResult {
        guard upload.byteCount > 0 else {
            upload.discard()
            let detail = "The request body is empty; send the image's bytes."
            api.endUpload(session, .failed(status: .unprocessableContent, detail: detail), answering: nil)
            return .now(.problem(.badRequest, detail: detail))
        }
        let (api, session, upload, responder, requestID) = (self.api, self.session, self.upload, self.responder, self.requestID)
        let displayName = self.displayName
        api.ingestQueue.async {
            let response = api.commitUpload(upload, name: nil, requestID: requestID, displayName: displayName)
            api.endUpload(session, Self.phase(after: response), answering: response)
            responder.respond(response)
        }
        return .later
    }

    func fail(_ reason: HTTPBodyFailure) {
        upload.discard()
        let phase: UploadSession.Phase =
            switch reason {
            case .tooLarge:
                .failed(status: .contentTooLarge, detail: "The upload exceeded server.maxUploadBytes; nothing was stored.")
            case .timedOut:
                .failed(status: .gone, detail: "The upload stalled past the body idle timeout; nothing was stored.")
            case .connectionClosed, .malformed, .sinkFailed:
                .failed(status: .gone, detail: "The upload was cut off before its end; nothing was stored.")
            }
        api.endUpload(session, phase, answering: nil)
    }

    /// What the session becomes after the commit answered `response`: an alias of the image
    /// it names, 422 for a body that is no image Flipbook serves (415 or 422 to the uploader),
    /// else 410 (nothing was stored).
    static func phase(after response: HTTPResponse) -> UploadSession.Phase {
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

    /// The `detail` of a problem document.
    static func problemDetail(_ response: HTTPResponse) -> String {
        let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return object?["detail"] as? String ?? response.status.reasonPhrase
    }
}
