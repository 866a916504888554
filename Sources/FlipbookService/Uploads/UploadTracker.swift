import AnimatedImage
import Dispatch
import HTTPServer
import Logging

/// Follows upload sessions while their bytes arrive: indexes each one's prefix for the readers
/// waiting on its frames, and ends a session when its body is stored or refused. The sessions
/// themselves are ``UploadSessions``'s.
final class UploadTracker: Sendable {
    let sessions: UploadSessions
    private let frames: ImageFrames
    private let logger: Logger

    init(sessions: UploadSessions, frames: ImageFrames, logger: Logger) {
        self.sessions = sessions
        self.frames = frames
        self.logger = logger
    }

    /// Indexes an upload's prefix for its waiters on the session's own queue, off the event loop
    /// (the caller claimed the indexing).
    func index(_ session: UploadSession) {
        session.indexQueue.async { [self] in runIndexing(session) }
    }

    /// Indexes the prefix received so far, answers the waiters whose frame it holds, and again
    /// while the body grows and someone waits; then ends the claim.
    func runIndexing(_ session: UploadSession) {
        while let source = session.prefixSource {
            let (image, bytes) = Self.indexPrefix(source.path, limits: frames.store.limits)
            let (ready, progress) = session.offer(image, bytes: bytes)
            for waiter in ready { waiter.answer(.ready(.receiving, progress)) }
            if !session.finishIndexing(bytes: max(bytes, source.bytes)) { return }
        }
        _ = session.finishIndexing(bytes: Int.max)
    }

    /// Indexes the prefix of an upload in `path` with the ordinary indexers (complete frames
    /// only); nil when it is not an image (yet), with the byte count it had.
    static func indexPrefix(_ path: String, limits: DecodeLimits) -> (AnimatedImage?, Int) {
        guard let prefix = UploadPrefix.map(path) else { return (nil, 0) }
        let image = try? AnimatedImage(bytes: prefix.bytes, limits: limits, verification: .structural)
        return (image, prefix.fileBytes)
    }

    /// Ends `session` in `phase`: its waiters get their frame (stored), the uploader's problem
    /// (`response`, when it refused the body) or the session's; its renderer lets go of its canvas.
    /// Stored, the frames made while the body arrived become the image's in the frame cache
    /// first, so neither the waiters nor the readers following the alias decode them again.
    func end(_ session: UploadSession, _ phase: UploadSession.Phase, answering response: HTTPResponse?) {
        if case .stored(let imageID) = phase, let record = frames.store.record(imageID) {
            frames.cache.adoptStaged(owner: session.id) { frames.cacheable(record, $0) }
        }
        // Before anyone can hear of the end (a waiter's answer, the session's 410), so that what
        // a client sees next (`/stats`) holds nothing of the session: released after the
        // answers, a client read the staged frames still counted (the full test suite's load
        // once showed it). A frame asked for meanwhile is drawn and not staged.
        session.renderer.release()
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

    /// What a session becomes after the commit answered `response`: an alias of the image it
    /// names, 422 for a body that is no image Flipbook serves (415 or 422 to the uploader), else
    /// 410 (nothing was stored).
    static func phase(after response: HTTPResponse) -> UploadSession.Phase {
        let detail = JSONBody.problemDetail(response)
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
    static func phase(after failure: HTTPBodyFailure) -> UploadSession.Phase {
        switch failure {
        case .tooLarge:
            .failed(status: .contentTooLarge, detail: "The upload exceeded server.maxUploadBytes; nothing was stored.")
        case .timedOut:
            .failed(status: .gone, detail: "The upload stalled past the body idle timeout; nothing was stored.")
        case .connectionClosed, .malformed, .sinkFailed:
            .failed(status: .gone, detail: "The upload was cut off before its end; nothing was stored.")
        }
    }

    /// 429: `uploads.maxSessions` sessions are open on this replica.
    static func sessionsFull(_ settings: FlipbookSettings.Uploads) -> HTTPError {
        HTTPError(
            .tooManyRequests,
            detail: "\(settings.maxSessions) upload sessions are in progress (uploads.maxSessions); retry shortly.",
            headers: ["Retry-After": "1"])
    }
}
