import Dispatch
import FoundationEssentials
import HTTPServer
import ImageStorage
import OutboundHTTP
import SystemResources

/// How a fetch of a source ended, before it becomes an answer: to the request that asked for it
/// (``response``) and, when the fetch fed an upload session, to the session (``phase(unchanged:)``).
enum SourceFetchResult {
    /// A rule refused it, the origin failed or was too slow (422, 502, 504), or it could not be
    /// written; nothing was stored.
    case refused(status: HTTPStatus, detail: String)
    /// The conditional request matched: the copy held is current.
    case notModified
    /// The bytes were verified and committed, or refused as an upload of them would be.
    case committed(HTTPResponse)

    /// The answer to the request that asked for the fetch.
    var response: HTTPResponse {
        switch self {
        case .refused(let status, let detail): .problem(status, detail: detail)
        case .notModified: HTTPResponse(status: .notModified)
        case .committed(let response): response
        }
    }

    /// What the session the fetch fed becomes: the stored image's alias (`unchanged` for a 304),
    /// or the failure its readers are told, with the fetch's own status — 422 for a rule, 502
    /// for an origin that failed or a body cut off, 504 for a slow one. Bytes that are no image
    /// leave it 422 (their 415 goes to the waiters), as an upload session's body does; any other
    /// refusal of the commit keeps its status, since nothing was cut off.
    func phase(unchanged: String?) -> UploadSession.Phase {
        switch self {
        case .refused(let status, let detail):
            return .failed(status: status, detail: detail)
        case .notModified:
            return unchanged.map { .stored(id: $0) }
                ?? .failed(status: .gone, detail: "The source was not modified; nothing new was stored.")
        case .committed(let response):
            if (200..<300).contains(response.status.code), let location = response.headers["Location"],
                location.hasPrefix("/images/")
            {
                return .stored(id: String(location.dropFirst("/images/".count)))
            }
            let detail = JSONBody.problemDetail(response)
            let status = response.status == .unsupportedMediaType ? .unprocessableContent : response.status
            return .failed(status: status, detail: detail)
        }
    }
}

/// Registration by URL with `Prefer: respond-async` (RFC 7240): the fetch feeds an upload session
/// and the request is answered at once with `202 Accepted`, `Location: /uploads/{uploadId}` and
/// `Preference-Applied: respond-async`. The client then reads the session as any upload's —
/// `GET /uploads/{uploadId}` for progress and then a 303 to the stored image (or the fetch's
/// problem), `GET /frames/{uploadId}/{k}` for frames as their bytes arrive from the origin.
extension SourceRoutes {
    /// Whether the request asked to be answered before its work is done (`Prefer: respond-async`).
    static func prefersRespondAsync(_ request: HTTPRequest) -> Bool {
        request.headers.values(for: "Prefer").contains { value in
            value.split(separator: ",").contains { preference in
                let token = preference.prefix { $0 != "=" && $0 != ";" }
                return token.trimmingSpaces().lowercased() == "respond-async"
            }
        }
    }

    /// Whether to answer `request` at once (`Prefer: respond-async` asked, and honoured): not
    /// behind several replicas (`uploads.key` set), where the session would live in the replica
    /// that fetches while its id is routed to another, which would see an empty session; there
    /// the preference is ignored, as RFC 7240 allows, and the registration answers when done
    /// (201/200, no `Preference-Applied`).
    func appliesRespondAsync(_ request: HTTPRequest) -> Bool {
        settings.uploads.key.isEmpty && Self.prefersRespondAsync(request)
    }

    /// Starts fetching `url` into a new upload session and answers 202 with the session's
    /// `Location`; or answers at once when the fetch cannot start: a URL the rules refuse
    /// outright (422), no fetch slot or session slot (429), storage not writable (503).
    /// `unchanged` is the image a 304 leaves the session an alias of (a refresh).
    func startFetchIntoSession(
        _ url: String, name: String?, validators: SourceFetcher.Validators?, unchanged: String?,
        requestID: HTTPRequestID
    ) -> HTTPResponse {
        do {
            _ = try services.fetcher.policy.check(url)
        } catch {
            let failure = SourceFetchFailure.refused(error)
            services.count(failure.reason)
            return .problem(failure.status, detail: failure.description)
        }
        let upload: UploadFile
        switch prepareFetch() {
        case .refused(let refusal): return refusal
        case .ready(let file): upload = file
        }
        guard let session = tracker.sessions.create() else {
            upload.discard()
            services.releaseFetch()
            services.count("busy")
            return .problem(UploadTracker.sessionsFull(settings.uploads))
        }
        _ = session.beginReceiving(path: upload.path)
        services.inBackground {
            let result = fetch(
                url, into: upload, session: session, name: name, validators: validators, requestID: requestID)
            let answer: HTTPResponse? = if case .notModified = result { nil } else { result.response }
            tracker.end(session, result.phase(unchanged: unchanged), answering: answer)
        }
        var headers = HTTPHeaders()
        headers.add(name: "Location", value: "/uploads/\(session.id)")
        headers.add(name: "Preference-Applied", value: "respond-async")
        headers.add(name: "Cache-Control", value: "no-store")
        return .json(JSONBody.encode(["uploadId": session.id]), status: .accepted, headers: headers)
    }
}
