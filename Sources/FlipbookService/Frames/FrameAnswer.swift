import AnimatedImage
import FrameCache
import HTTPServer
import ImageStorage
import Logging

/// How long a client or a proxy may keep an answer (`Cache-Control`), chosen in one place for
/// frames, previews and storyboards.
enum CachePolicy: Sendable, Equatable {
    /// Content-addressed: the bytes can never change under the id; kept for a year.
    case immutable
    /// Named and library images may be replaced: revalidated every time (the `ETag` makes that a
    /// 304).
    case revalidate
    /// An upload session's frames: the id is an alias that expires; nothing keeps them.
    case noStore

    /// The policy of what is made from `record`: immutable for content ids, else revalidated.
    static func of(_ record: StoredImage) -> CachePolicy { record.isImmutable ? .immutable : .revalidate }

    /// The `Cache-Control` value.
    var header: String {
        switch self {
        case .immutable: "public, max-age=31536000, immutable"
        case .revalidate: "no-cache"
        case .noStore: "no-store"
        }
    }
}

/// Whose frame an answer is: a stored image's content, or an upload session's bytes still arriving
/// (its content hash is not known yet).
enum FrameOrigin: Sendable {
    case content(sha256: String)
    case upload(id: String)
}

/// The answer of every route that serves a frame — stored images (`/frames/{id}/{index}`,
/// `?t=`), upload sessions while their bytes arrive, and a session's frame once it is stored:
/// which frame (index, count, delay), in which rendition (the format's type), named by which
/// `ETag`, kept how long (``CachePolicy``), with which header fields, and the `200`, the `304` and
/// the failures built from them. The frame cache's prepared answers (``FrameResponses``) are made
/// from it too, so a cached frame and a frame made now carry the same fields.
struct FrameAnswer: Sendable {
    let index: Int
    let frameCount: Int
    let delayMs: Int
    let format: FrameFormat
    let etag: String
    let caching: CachePolicy
    /// What the frame's own fields do not say: `Vary: Accept` for a negotiated format, and
    /// `Content-Location` for a frame asked for by time (``extraHeaders(negotiated:contentLocation:)``).
    let extra: HTTPHeaders

    /// Frame `index` of `record` (the caller checked it is one) in `rendition`.
    init(
        record: StoredImage, index: Int, rendition: FrameRendition, pngLevel: Int, caching: CachePolicy? = nil,
        extra: HTTPHeaders = HTTPHeaders()
    ) {
        let metadata = record.metadata
        self.index = index
        frameCount = metadata.frameCount
        delayMs = metadata.frames[index].delayMs
        format = rendition.format
        etag = Self.etag(
            .content(sha256: record.sha256), index: index, rendition: rendition, canvasWidth: metadata.width,
            canvasHeight: metadata.height, pngLevel: pngLevel)
        self.caching = caching ?? .of(record)
        self.extra = extra
    }

    /// Frame `index` of `image`, the prefix of upload session `uploadID` received so far.
    init(upload uploadID: String, image: AnimatedImage, index: Int, rendition: FrameRendition, pngLevel: Int, extra: HTTPHeaders)
    {
        self.index = index
        frameCount = image.frameCount
        delayMs = image.timeline.delaysMs[index]
        format = rendition.format
        etag = Self.etag(
            .upload(id: uploadID), index: index, rendition: rendition, canvasWidth: image.canvasWidth,
            canvasHeight: image.canvasHeight, pngLevel: pngLevel)
        caching = .noStore
        self.extra = extra
    }

    /// Names a frame's bytes: whose frame (the content's hash; an upload's id, where the hash is
    /// not known yet), the index, the rendition (none for the full-size PNG), the deflate level of
    /// PNGs and the revision of Flipbook's output (``AnimatedImage/outputRevision``).
    static func etag(
        _ origin: FrameOrigin, index: Int, rendition: FrameRendition, canvasWidth: Int, canvasHeight: Int, pngLevel: Int
    ) -> String {
        let name =
            rendition.isExact(width: canvasWidth, height: canvasHeight)
            ? "z\(pngLevel)" : rendition.format == .png ? "\(rendition.key)-z\(pngLevel)" : rendition.key
        let owner =
            switch origin {
            case .content(let sha256): "f-\(sha256.prefix(32))"
            case .upload(let id): "u-\(id)"
            }
        return "\"\(owner)-\(index)-\(name)-r\(AnimatedImage.outputRevision)\""
    }

    /// `Vary: Accept`, made once (a negotiated hit copies it; adding the field cost it 1,700
    /// instructions).
    static let varyAccept: HTTPHeaders = {
        var headers = HTTPHeaders()
        headers.add(name: "Vary", value: "Accept")
        return headers
    }()

    /// The fields a frame's answer carries beyond its own: `Vary: Accept` when the format was
    /// negotiated, `Content-Location` when the frame was asked for by time.
    static func extraHeaders(negotiated: Bool, contentLocation: String?) -> HTTPHeaders {
        var extra = negotiated ? varyAccept : HTTPHeaders()
        if let contentLocation { extra.add(name: "Content-Location", value: contentLocation) }
        return extra
    }

    /// `Content-Location` of a frame asked for by time: its index, with the request's query less
    /// `t` (the rendition's parameters, as given).
    static func contentLocation(_ request: HTTPRequest, id: String, index: Int) -> String {
        let path = "/frames/\(id)/\(index)"
        guard let mark = request.target.firstIndex(of: "?") else { return path }
        let kept = request.target[request.target.index(after: mark)...].split(separator: "&").filter {
            $0 != "t" && !$0.hasPrefix("t=")
        }
        return kept.isEmpty ? path : path + "?" + kept.joined(separator: "&")
    }

    /// The frame's own fields, kept `caching` long (the answer's own policy by default): type,
    /// validator, caching, and the frame's place and delay.
    func headers(caching: CachePolicy? = nil) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: format.mimeType)
        headers.add(name: "ETag", value: etag)
        headers.add(name: "Cache-Control", value: (caching ?? self.caching).header)
        headers.add(name: "X-Frame-Index", value: String(index))
        headers.add(name: "X-Frame-Count", value: String(frameCount))
        headers.add(name: "X-Frame-Delay-Ms", value: String(delayMs))
        return headers
    }

    /// The fields of the `200`: the frame's own, then the extra ones.
    private var responseHeaders: HTTPHeaders {
        var headers = headers()
        for field in extra { headers.add(name: field.name, value: field.value) }
        return headers
    }

    /// The `200` with `bytes` (sent with `sendfile` from the cache's memory file when they are
    /// there).
    func ok(_ bytes: FrameBytes) -> HTTPResponse {
        if let file = FrameResponses.fileBody(bytes) {
            return HTTPResponse(status: .ok, headers: responseHeaders, fileBody: file)
        }
        return HTTPResponse(status: .ok, headers: responseHeaders, body: bytes.array)
    }

    /// The `304`: the validator and caching fields the `200` would have had, and the extra ones.
    func notModified() -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add(name: "ETag", value: etag)
        headers.add(name: "Cache-Control", value: caching.header)
        for field in extra { headers.add(name: field.name, value: field.value) }
        return HTTPResponse(status: .notModified, headers: headers)
    }

    /// The answer when the frame cache made the frame (the `200`), or the problem that says why it
    /// could not: 429 (decode queue full), 404 (no such frame, image deleted), 422 (undecodable,
    /// logged), 503 (shutting down).
    func response(_ result: Result<EncodedFrame, FrameCacheError>, logger: Logger) -> HTTPResponse {
        switch result {
        case .success(let frame):
            if let prepared = frame.attachment as? FrameResponses, prepared.carries(etag: etag),
                let ok = prepared.answer(caching, notModified: false, loop: nil)
            {
                return HTTPResponse(ok, extraHeaders: extra)
            }
            return ok(frame.bytes)
        case .failure(let error):
            return Self.problem(error, logger: logger)
        }
    }

    /// The problem answering a frame the cache could not make.
    static func problem(_ error: FrameCacheError, logger: Logger) -> HTTPResponse {
        switch error {
        case .queueFull(let seconds):
            var extra = HTTPHeaders()
            extra.add(name: "Retry-After", value: String(seconds))
            return .problem(
                .tooManyRequests, detail: "Too many frames are waiting to be decoded; retry shortly.", headers: extra)
        case .frameOutOfRange(let index, let count):
            return .problem(.notFound, detail: "There is no frame \(index); the image has \(count).")
        case .loadFailed(let why), .decodeFailed(let why):
            logger.error("frame not produced", metadata: ["error": "\(why)"])
            return .problem(.unprocessableContent, detail: "The frame cannot be decoded: \(why).")
        case .removed:
            return .problem(.notFound, detail: "The image was deleted.")
        case .shuttingDown:
            return .problem(.serviceUnavailable, detail: "The server is shutting down.")
        }
    }
}
