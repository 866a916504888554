import Dispatch
import FoundationEssentials
import Glibc
import HTTPServer
import Synchronization

/// `GET /images/{id}/preview` (``preview(_:_:)``), `GET /images/{id}/storyboard`, `…/storyboard.vtt`
/// and `GET /derived/{sha256}/{product}/{file}` (``storyboard(_:_:)``): products made once and
/// kept (``DerivedProducts``). A kept product is sent from its file (`sendfile(2)`, `ETag`,
/// 304 on `If-None-Match`, byte ranges, caching as the image's frames); the wait for one being built is
/// bounded by `derived.maxWaitSeconds` (then 503 with `Retry-After`; the build goes on).
struct DerivedRoutes: Sendable {
    let lookup: RecordLookup
    let renditions: RenditionResolver
    let derived: DerivedProducts
    let settings: FlipbookSettings
    /// Where the waits that run out are answered 503 (never on the shared pool).
    private let deadlines = RequestDeadlines(label: "flipbook.derived-waits")

    func register(in router: inout Router) {
        router.get("/images/:id/preview") { preview($0, $1) }
        router.get("/images/:id/storyboard") { storyboard($0, $1) }
        router.get("/images/:id/storyboard.vtt") { storyboardTrack($0, $1) }
        router.get("/derived/:sha/:product/:file") { derivedFile($0, $1) }
    }

    /// The file at `path` as the body, or 404 when it is gone (removed meanwhile). After
    /// `If-None-Match` (304), one byte range is answered with 206 and `Content-Range`, a range
    /// past the end with 416 (`Content-Range: bytes */LENGTH`), and an `If-Range` that is not
    /// `etag` with the whole file (``ByteRanges``); every answer says `Accept-Ranges: bytes`.
    static func productFile(
        _ request: HTTPRequest, path: String, contentType: String, etag: String, cacheControl: String
    ) -> HTTPResponse {
        if request.headers.ifNoneMatchMatches(etag) { return .notModified(etag: etag, cacheControl: cacheControl) }
        guard let file = OpenProductFile(path: path) else {
            return .problem(.notFound, detail: "The product was removed; ask for it again.")
        }
        var headers = HTTPHeaders()
        headers.add(name: "Accept-Ranges", value: "bytes")
        switch ByteRanges.answer(method: request.method, headers: request.headers, length: file.size, etag: etag) {
        case .whole:
            headers.add(name: "Content-Type", value: contentType)
            headers.add(name: "ETag", value: etag)
            headers.add(name: "Cache-Control", value: cacheControl)
            return HTTPResponse(
                headers: headers, fileBody: HTTPFileBody(descriptor: file.descriptor, offset: 0, count: file.size, owner: file))
        case .part(let bytes):
            headers.add(name: "Content-Type", value: contentType)
            headers.add(name: "Content-Range", value: "bytes \(bytes.lowerBound)-\(bytes.upperBound - 1)/\(file.size)")
            headers.add(name: "ETag", value: etag)
            headers.add(name: "Cache-Control", value: cacheControl)
            return HTTPResponse(
                status: .partialContent, headers: headers,
                fileBody: HTTPFileBody(descriptor: file.descriptor, offset: bytes.lowerBound, count: bytes.count, owner: file))
        case .unsatisfiable:
            headers.add(name: "Content-Range", value: "bytes */\(file.size)")
            return .problem(
                .rangeNotSatisfiable,
                detail: "The Range names no byte of this \(file.size)-byte file; byte positions start at 0.",
                headers: headers)
        }
    }

    /// Calls `start` with a completion; answers with `ready()` at once when `start` says the
    /// product is there, else when the build completes — or 503 + `Retry-After` after
    /// `derived.maxWaitSeconds`, whichever comes first.
    func whenProductReady(
        _ responder: HTTPResponder, start: (@escaping DerivedBuilds.Completion) -> Bool,
        ready: @escaping @Sendable () -> HTTPResponse
    ) -> HTTPHandlerResult {
        let answered = Mutex(false)
        let claim: @Sendable () -> Bool = {
            answered.withLock { was in
                defer { was = true }; return !was
            }
        }
        let readyNow = start { result in
            guard claim() else { return }
            switch result {
            case .success: responder.respond(ready())
            case .failure(let failure): responder.respond(failure.response)
            }
        }
        if readyNow { return .now(ready()) }
        let wait = settings.derived.maxWaitSeconds
        deadlines.after(wait) {
            guard claim() else { return }
            responder.respond(
                .problem(
                    .serviceUnavailable, detail: "It is still being made (derived.maxWaitSeconds is \(wait)); retry shortly.",
                    headers: ["Retry-After": String(max(1, Int(wait.rounded(.up))))]))
        }
        return .later
    }
}

/// A product file opened for sending: the descriptor stays open (and the bytes readable, even if
/// the file is removed meanwhile) until the response is sent.
final class OpenProductFile: Sendable {
    let descriptor: Int32
    let size: Int

    init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return nil
        }
        descriptor = fd
        size = Int(status.st_size)
    }

    deinit { close(descriptor) }
}
