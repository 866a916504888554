import FrameCache
import HTTPServer
import ImageStorage
import Logging
import SystemResources

/// Takes images in: opens the temporary file an upload is streamed into, and verifies and stores
/// a finished one (on threads of its own, off the event loops and Dispatch's shared pool) — the
/// body of `POST /images`, `PUT /images/{name}`, `PUT /uploads/{uploadId}` and of a source
/// fetched by URL. Verifying makes the image's seek anchors (``SeekAnchors``), which become its
/// first cached frames and are kept on disk.
final class ImageIngest: Sendable {
    let store: ImageStore
    let frames: ImageFrames
    let logger: Logger
    /// Uploads are verified (every frame decoded once) and committed here, off the event loops:
    /// a few per core, as verifying computes and committing waits on the disk or S3.
    let workers = WorkerThreads(name: "ingest", limit: max(4, 2 * CPULimit.usableCores))

    init(store: ImageStore, frames: ImageFrames, logger: Logger) {
        self.store = store
        self.frames = frames
        self.logger = logger
    }

    /// A temporary file for an upload's body, or the 503 that says storage cannot take one.
    func beginUpload() -> Result<UploadFile, HTTPError> {
        do {
            return .success(try store.beginUpload())
        } catch {
            logger.error("cannot start an upload", metadata: ["error": "\(error)"])
            return .failure(Self.cannotBegin(error))
        }
    }

    /// The 503 for an upload while storage is known to be unreachable (nil: it may go on), found
    /// out without making a file: the check made when the head arrives, the file being opened at
    /// the body's first byte (``DeferredUploadSink``).
    func refusalBeforeBody() -> HTTPError? {
        do {
            try store.checkReachable()
            return nil
        } catch {
            logger.error("cannot start an upload", metadata: ["error": "\(error)"])
            return Self.cannotBegin(error)
        }
    }

    /// The 503 for an upload storage could not open a temporary file for.
    static func cannotBegin(_ error: any Error) -> HTTPError {
        let detail =
            if case ImageStore.StoreError.unavailable = error {
                "Storage cannot be reached right now; retry shortly."
            } else {
                "Storage is not writable right now; retry shortly."
            }
        return HTTPError(
            .serviceUnavailable, detail: detail, headers: ["Retry-After": String(HTTPResponse.storageRetryAfterSeconds)])
    }

    /// Verifies and stores a finished upload (on the ingest workers) and says how it went: 201/200
    /// with the metadata, or the problem that refused it.
    func commit(
        _ upload: UploadFile, name: String?, requestID: HTTPRequestID, origin: SourceOrigin? = nil, displayName: String? = nil
    ) -> HTTPResponse {
        let anchors = SeekAnchors(cache: frames.cache)
        defer { anchors.discard() }  // what was not adopted
        do {
            let (record, created) = try store.commit(
                upload, name: name, origin: origin, displayName: displayName, visit: anchors.visit)
            anchors.adopt { frames.cacheable(record, $0) }
            if created { frames.derived.keepAnchors(anchors.frames, of: record.sha256) }
            var headers = HTTPHeaders()
            headers.add(name: "Location", value: "/images/\(record.id)")
            headers.add(name: "ETag", value: ImageRoutes.metadataETag(record))
            return .json(metadata(of: record), status: created ? .created : .ok, headers: headers)
        } catch let error as ImageStore.StoreError {
            return refusal(error, requestID: requestID)
        } catch {
            logger.error("upload not stored", metadata: ["error": "\(error)", "requestID": "\(requestID)"])
            return .problem(.internalServerError, detail: "The image could not be stored.")
        }
    }

    /// The metadata document of `record`, as `GET /images/{id}` serves it.
    func metadata(of record: StoredImage) -> [UInt8] {
        store.recordAndMetadata(record.id)?.1 ?? (try? ImageStore.encodeMetadata(of: record)) ?? []
    }

    /// The answer to an upload the store refused (storage's failures logged).
    private func refusal(_ error: ImageStore.StoreError, requestID: HTTPRequestID) -> HTTPResponse {
        switch error {
        case .unavailable(let why):
            logger.warning("upload not stored: storage unavailable", metadata: ["error": "\(why)", "requestID": "\(requestID)"])
        case .io(let why):
            logger.error("upload not stored", metadata: ["error": "\(why)", "requestID": "\(requestID)"])
        default: break
        }
        return .problem(Self.refusal(error))
    }

    /// The problem an upload the store refused is answered with, for the API and `flipbook import`.
    static func refusal(_ error: ImageStore.StoreError) -> HTTPError {
        switch error {
        case .unsupportedFormat(let why):
            HTTPError(.unsupportedMediaType, detail: "Unsupported image format: \(why).")
        case .undecodable(let why):
            HTTPError(.unprocessableContent, detail: "The image cannot be served: \(why).")
        case .readOnly(let why):
            HTTPError(.conflict, detail: why + ".")
        case .busy(let why):
            HTTPError(
                .tooManyRequests, detail: "The image cannot be verified now: \(why); retry shortly.",
                headers: ["Retry-After": "1"])
        case .unavailable:
            HTTPError(
                .serviceUnavailable, detail: "The image could not be stored: storage cannot be reached right now; retry shortly.",
                headers: ["Retry-After": String(HTTPResponse.storageRetryAfterSeconds)])
        case .io:
            HTTPError(.internalServerError, detail: "The image could not be stored.")
        }
    }
}
