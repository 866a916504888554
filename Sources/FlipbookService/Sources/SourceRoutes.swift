import Dispatch
import FoundationEssentials
import Glibc
import HTTPServer
import ImageStorage
import Logging
import OutboundHTTP

/// Receives the small JSON body of a registration by URL (`{"url": "https://…"}`), then fetches
/// on the sources queue and answers as an upload of the fetched bytes would — or, asked
/// `Prefer: respond-async`, answers 202 at once and feeds the fetch into an upload session.
final class SourceRequestSink: HTTPBodySink, @unchecked Sendable {
    static let maxBodyBytes = 16 * 1024
    private let sources: SourceRoutes
    private let request: HTTPRequest
    private let name: String?
    private let responder: HTTPResponder
    private var body: [UInt8] = []

    init(sources: SourceRoutes, request: HTTPRequest, name: String?, responder: HTTPResponder) {
        self.sources = sources
        self.request = request
        self.name = name
        self.responder = responder
    }

    func write(_ chunk: UnsafeRawBufferPointer) throws {
        body.append(contentsOf: chunk)
        if body.count > Self.maxBodyBytes {
            throw HTTPError(.contentTooLarge, detail: "A registration by URL is a JSON object of at most 16 KiB.")
        }
    }

    func finish() -> HTTPHandlerResult {
        // A signature covers the path and query, not the body: where registrations must be
        // signed, the URL must be the signed `url` parameter.
        if request.query("url") == nil, let signing = sources.services.signing, let route = request.route,
            signing.needsSignature(method: request.method, route: route, parameters: [String](), isURLSource: true)
        {
            return .now(
                .problem(
                    .forbidden,
                    detail: "This request must be signed: a signed registration names its URL in the url parameter."))
        }
        let url: String
        switch Self.sourceURL(query: request.query("url"), body: body) {
        case .success(let found): url = found
        case .failure(let refusal): return .now(.problem(refusal))
        }
        if sources.appliesRespondAsync(request) {
            return .now(
                sources.startFetchIntoSession(url, name: name, validators: nil, unchanged: nil, requestID: request.requestID))
        }
        let (sources, name, responder, requestID) = (self.sources, self.name, self.responder, request.requestID)
        sources.services.inBackground {
            responder.respond(sources.fetchAndCommit(url, name: name, requestID: requestID))
        }
        return .later
    }

    func fail(_ reason: HTTPBodyFailure) {}

    /// The URL named by the `url` parameter (the form a signature covers) and/or the body's
    /// `url` member; when both are given they must be equal.
    static func sourceURL(query: String?, body: [UInt8]) -> Result<String, HTTPError> {
        var fromBody: String? = nil
        if !body.isEmpty {
            struct Named: Decodable { var url: String }
            guard let url = try? JSONDecoder().decode(Named.self, from: Data(body)).url else {
                return .failure(HTTPError(.badRequest, detail: "The body must be a JSON object with a string member 'url'."))
            }
            fromBody = url
        }
        switch (query, fromBody) {
        case (nil, nil):
            return .failure(HTTPError(.badRequest, detail: "Name the image's URL: {\"url\": \"https://…\"}."))
        case (let q?, let b?) where q != b:
            return .failure(HTTPError(.badRequest, detail: "The url parameter and the body's url differ."))
        case (let q?, _):
            return .success(q)
        case (nil, let b?):
            return .success(b)
        }
    }
}

/// A fetch about to start (its slot claimed, its temporary file open), or the answer to give
/// instead.
enum PreparedFetch {
    case ready(UploadFile)
    case refused(HTTPResponse)
}

/// `POST /images` and `PUT /images/{name}` by URL (their body's sink, ``SourceRequestSink``),
/// `POST /images/{id}/refresh`, the background refresh of sources due for it, and signed frame
/// URLs in metadata.
struct SourceRoutes: Sendable {
    /// The fetcher, the signing policy, the fetch slots and counters.
    let services: SourceServices
    let ingest: ImageIngest
    let tracker: UploadTracker
    let settings: FlipbookSettings
    let logger: Logger

    private var store: ImageStore { ingest.store }

    func register(in router: inout Router) {
        router.post("/images/:id/refresh", maxBodyBytes: 4096) { refreshSource($0, $1) }
    }

    /// Fetches `url` into an upload and commits it (slow: on the sources queue). With
    /// `validators`, a 304 answers 304 (the image is unchanged).
    func fetchAndCommit(
        _ url: String, name: String?, validators: SourceFetcher.Validators? = nil, requestID: HTTPRequestID
    ) -> HTTPResponse {
        switch prepareFetch() {
        case .refused(let refusal):
            return refusal
        case .ready(let upload):
            return fetch(url, into: upload, session: nil, name: name, validators: validators, requestID: requestID)
                .response
        }
    }

    /// Claims a fetch slot and opens the temporary file the body goes to; the answer to give
    /// instead when either cannot be had (429, 503). The caller hands the file to
    /// ``fetch(_:into:session:name:validators:requestID:)``, which releases the slot.
    func prepareFetch() -> PreparedFetch {
        guard services.claimFetch() else {
            services.count("busy")
            return .refused(
                .problem(
                    .tooManyRequests, detail: "Too many sources are being fetched at once; retry shortly.",
                    headers: ["Retry-After": "1"]))
        }
        do {
            return .ready(try store.beginUpload())
        } catch {
            services.releaseFetch()
            return .refused(.storageUnavailable("The source cannot be stored right now"))
        }
    }

    /// Fetches `url` into `upload` — and into `session` as the bytes arrive, when there is one,
    /// so its readers get frames while the origin still sends — then commits it. Releases the
    /// fetch slot ``prepareFetch()`` claimed. Slow: on the sources queue.
    func fetch(
        _ url: String, into upload: UploadFile, session: UploadSession?, name: String?,
        validators: SourceFetcher.Validators?, requestID: HTTPRequestID
    ) -> SourceFetchResult {
        defer { services.releaseFetch() }
        let fetched: SourceFetcher.Fetched
        do {
            fetched = try services.fetcher.fetch(url, validators: validators) { chunk in
                try upload.append(chunk)
                if let session, session.received(total: upload.byteCount) { tracker.index(session) }
            }
        } catch {
            upload.discard()
            services.count(error.reason)
            if error.status == .internalServerError {
                logger.error("source not written", metadata: ["error": "\(error)", "requestID": "\(requestID)"])
            }
            return .refused(status: error.status, detail: error.description)
        }
        if fetched.status == 304 {
            upload.discard()
            services.count("not-modified")
            return .notModified
        }
        guard upload.byteCount > 0 else {
            upload.discard()
            services.count("empty")
            return .refused(status: .unprocessableContent, detail: "The source's body is empty.")
        }
        services.count("ok")
        let origin = SourceOrigin(url: url, etag: fetched.etag, lastModified: fetched.lastModified, fetchedAt: Date())
        return .committed(ingest.commit(upload, name: name, requestID: requestID, origin: origin))
    }

    /// `POST /images/{id}/refresh`: revalidates an image registered by URL with its validators.
    /// Unchanged → 200 with its metadata; new bytes → a new content id (201, `Location`), and a
    /// named image moves to them (200); `Prefer: respond-async` → 202 and an upload session.
    func refreshSource(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        if let refusal = Authorization.check(
            request, token: settings.auth.uploadToken, what: "Refreshing", disabledWhenEmpty: false)
        {
            return .now(.problem(refusal))
        }
        let id = request.pathParameters["id"] ?? ""
        let requestID = request.requestID
        let respondAsync = appliesRespondAsync(request)
        services.inBackground {
            responder.respond(refresh(id, requestID: requestID, respondAsync: respondAsync))
        }
        return .later
    }

    /// Revalidates image `id`; with `respondAsync`, into an upload session (202) that ends as an
    /// alias of the new bytes' image, or of `id` itself when the origin answers 304.
    func refresh(_ id: String, requestID: HTTPRequestID, respondAsync: Bool = false) -> HTTPResponse {
        guard let record = store.record(id, reindexing: false) else { return .unknownImage(id) }
        guard let origin = record.origin else {
            return .problem(.conflict, detail: "Image '\(id)' was not registered by URL; there is nothing to refresh.")
        }
        let validators = SourceFetcher.Validators(etag: origin.etag, lastModified: origin.lastModified)
        let name = record.source == .named ? id : nil
        if respondAsync {
            return startFetchIntoSession(
                origin.url, name: name, validators: validators, unchanged: id, requestID: requestID)
        }
        let response = fetchAndCommit(origin.url, name: name, validators: validators, requestID: requestID)
        guard response.status == .notModified else { return response }
        return .json(ingest.metadata(of: record), headers: ["ETag": ImageRoutes.metadataETag(record)])
    }

    /// With `sources.refreshSeconds`, an image whose source was fetched longer ago is
    /// revalidated in the background when it is asked for (the request is not held).
    func refreshIfDue(_ record: StoredImage) {
        guard services.refreshSeconds > 0, let origin = record.origin,
            Date().timeIntervalSince(origin.fetchedAt) > services.refreshSeconds,
            services.claimRefresh(record.id)
        else { return }
        let id = record.id
        services.inBackground {
            _ = refresh(id, requestID: .none)
            services.releaseRefresh(id)
        }
    }
}
