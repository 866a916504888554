import AnimatedImage
import FoundationEssentials
import FrameCache
import HTTPServer
import ImageStorage
import Logging

/// `POST /images` and `PUT /images/{name}` (the bytes, or a source by URL: ``SourceRoutes``),
/// `GET /images`, `GET /images/{id}`, `GET /images/{id}/delays`, `GET /images/{id}/cache`,
/// `DELETE /images/{id}`.
struct ImageRoutes: Sendable {
    let lookup: RecordLookup
    let renditions: RenditionResolver
    let frames: ImageFrames
    let ingest: ImageIngest
    let sources: SourceRoutes
    let settings: FlipbookSettings
    let logger: Logger

    private var store: ImageStore { lookup.store }

    func register(in router: inout Router) {
        let maxUploadBytes = settings.server.maxUploadBytes
        router.stream(.POST, "/images", maxBodyBytes: maxUploadBytes) { request, responder in
            uploadSink(request, responder, name: nil)
        }
        router.stream(.PUT, "/images/:id", maxBodyBytes: maxUploadBytes) { request, responder in
            uploadSink(request, responder, name: request.pathParameters["id"])
        }
        router.get("/images") { listImages($0, $1) }
        router.get("/images/:id") { metadata($0, $1) }
        router.delete("/images/:id") { deleteImage($0, $1) }
        router.get("/images/:id/delays") { delays($0, $1) }
        router.get("/images/:id/cache") { cacheResidency($0, $1) }
    }

    /// The sink for `POST /images` (name nil) or `PUT /images/{name}`.
    func uploadSink(_ request: HTTPRequest, _ responder: HTTPResponder, name: String?) -> any HTTPBodySink {
        if let refusal = Authorization.check(
            request, token: settings.auth.uploadToken, what: "Uploading", disabledWhenEmpty: false)
        {
            return RefusingSink(refusal)
        }
        if let name, let why = ImageID.validateName(name) {
            return RefusingSink(HTTPError(.badRequest, detail: "Invalid image name '\(name)': \(why)."))
        }
        if SignedRequestPolicy.isURLSource(request) {
            return SourceRequestSink(sources: sources, request: request, name: name, responder: responder)
        }
        if let refusal = ingest.refusalBeforeBody() { return RefusingSink(refusal) }
        let ingest = self.ingest
        let displayName = DisplayName.from(contentDisposition: request.headers["Content-Disposition"])
        let requestID = request.requestID
        return DeferredUploadSink {
            switch ingest.beginUpload() {
            case .success(let upload):
                UploadSink(
                    ingest: ingest, upload: upload, name: name, displayName: displayName, responder: responder,
                    requestID: requestID)
            case .failure(let refusal):
                RefusingSink(refusal)
            }
        }
    }

    /// Metadata may be polled: `no-cache` makes clients revalidate, and the ETag makes that a 304.
    static let metadataCacheControl = "no-cache"

    /// Names the metadata document: the image's content and the output revision that derived it
    /// (a record re-indexed after an upgrade gets a new tag, so a client's copy is not kept).
    static func metadataETag(_ record: StoredImage) -> String {
        "\"m-\(record.sha256.prefix(32))-r\(record.outputRevision ?? 0)\""
    }

    func listImages(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        var limit = 100
        if let text = request.query("limit") {
            guard let value = Int(text), value >= 1 else {
                return .now(.problem(.badRequest, detail: "limit must be a positive integer."))
            }
            limit = min(value, settings.storage.maxPageSize)
        }
        let cursor = request.query("after").flatMap { $0.isEmpty ? nil : $0 }
        let (store, logger, pageLimit) = (self.store, self.logger, limit)
        return lookup.offLoop(responder) {
            let page: (images: [ImageSummary], next: String?)
            do throws(StorageFailure) {
                page = try store.list(after: cursor, limit: pageLimit)
            } catch {
                return .storageFailure(error, logger: logger)
            }
            var headers = HTTPHeaders()
            headers.add(name: "Cache-Control", value: "no-store")
            return .json(
                JSONBody.encode(ImagePage(images: page.images.map(ImageSummaryDocument.init(summary:)), next: page.next)),
                headers: headers)
        }
    }

    /// One page of `GET /images`.
    struct ImagePage: Encodable {
        var images: [ImageSummaryDocument]
        var next: String?
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(images, forKey: .images)
            try c.encode(next, forKey: .next)  // null on the last page
        }
        enum CodingKeys: String, CodingKey { case images, next }
    }

    func metadata(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        let id = request.pathParameters["id"] ?? ""
        return lookup.withKnownRecord(id, responder) { record, json in
            sources.refreshIfDue(record)
            let etag = Self.metadataETag(record)
            if request.headers.ifNoneMatchMatches(etag) {
                return .now(.notModified(etag: etag, cacheControl: Self.metadataCacheControl))
            }
            var headers = HTTPHeaders()
            headers.add(name: "ETag", value: etag)
            headers.add(name: "Cache-Control", value: Self.metadataCacheControl)
            let body = sources.withSignedFrameURLs(json, request: request, id: id, frameCount: record.metadata.frameCount)
            return .now(.json(body, headers: headers))
        }
    }

    func delays(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        let id = request.pathParameters["id"] ?? ""
        return lookup.withKnownRecord(id, responder) { record, _ in
            .now(Self.delaysResponse(request, id: id, record: record))
        }
    }

    static func delaysResponse(_ request: HTTPRequest, id: String, record: StoredImage) -> HTTPResponse {
        let etag = "\"d-\(record.sha256.prefix(32))-r\(record.outputRevision ?? 0)\""
        if request.headers.ifNoneMatchMatches(etag) {
            return .notModified(etag: etag, cacheControl: Self.metadataCacheControl)
        }
        struct Delays: Encodable {
            var id: String
            var frameCount: Int
            var delaysMs: [Int]
            var rawDelaysMs: [Int]
            var timestampsMs: [Int]
            var durationMs: Int
            var playCount: Int
            var repetitionCount: RepetitionCountJSON
            var delayGcdMs: Int
        }
        let frames = record.metadata.frames
        let body = Delays(
            id: id, frameCount: frames.count, delaysMs: frames.map(\.delayMs),
            rawDelaysMs: frames.map(\.rawDelayMs), timestampsMs: frames.map(\.timestampMs),
            durationMs: record.metadata.durationMs, playCount: record.metadata.playCount,
            repetitionCount: RepetitionCountJSON(record.metadata.repetitionCount), delayGcdMs: record.metadata.delayGcdMs)
        var headers = HTTPHeaders()
        headers.add(name: "ETag", value: etag)
        headers.add(name: "Cache-Control", value: Self.metadataCacheControl)
        return .json(JSONBody.encode(body), headers: headers)
    }

    /// Which frames the server's cache holds for the image right now (a player page's strip),
    /// with its window and playhead; `playhead` is null while the image has no cache entry.
    /// Reading it moves nothing.
    /// `GET /images/{id}/cache`, with the rendition parameters of the frame routes: which frames
    /// of that rendition (the full-size PNG without them) the cache holds. `rendition=NAME` names
    /// the rendition as the answer does instead (``RenditionName``).
    func cacheResidency(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        let id = request.pathParameters["id"] ?? ""
        do throws(RenditionParameterError) {
            if let name = try RenditionName.named(in: request.queryItems) { return cacheResidency(id, named: name, responder) }
        } catch {
            return .now(.problem(.badRequest, detail: error.detail))
        }
        let requested: RequestedRendition
        switch renditions.requested(request) {
        case .success(let value): requested = value
        case .failure(let error): return .now(.problem(.badRequest, detail: error.detail))
        }
        return lookup.withRendition(id, responder, requested, renditions) { record, rendition in
            let key = frames.cacheKey(record, rendition)
            let name = key == record.frameCacheID ? "full" : rendition.key
            var response = Self.residencyResponse(id: id, rendition: name, record: record, held: frames.cache.residency(of: key))
            if requested.negotiated { response.headers.add(name: "Vary", value: "Accept") }
            return .now(response)
        }
    }

    /// `GET /images/{id}/cache?rendition=NAME` (``RenditionName``): the rendition as the answer
    /// names it. The full-size PNG's own key names the full-size frames, as `full` does; a
    /// well-formed key no request made has nothing cached.
    private func cacheResidency(_ id: String, named name: RenditionName, _ responder: HTTPResponder) -> HTTPHandlerResult {
        lookup.withKnownRecord(id, responder) { [frames] record, _ in
            let (key, shown): (String, String)
            switch name {
            case .full: (key, shown) = (record.frameCacheID, "full")
            case .key(let rendition):
                key = frames.cacheKey(record, rendition)
                shown = key == record.frameCacheID ? "full" : rendition.key
            }
            return .now(Self.residencyResponse(id: id, rendition: shown, record: record, held: frames.cache.residency(of: key)))
        }
    }

    static func residencyResponse(id: String, rendition: String, record: StoredImage, held: ImageResidency?) -> HTTPResponse {
        struct Residency: Encodable {
            var id: String
            var rendition: String
            var frameCount: Int
            var cachedFrames: [Int]
            var window: Int
            var whole: Bool
            var playhead: Int?
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(id, forKey: .id)
                try c.encode(rendition, forKey: .rendition)
                try c.encode(frameCount, forKey: .frameCount)
                try c.encode(cachedFrames, forKey: .cachedFrames)
                try c.encode(window, forKey: .window)
                try c.encode(whole, forKey: .whole)
                try c.encode(playhead, forKey: .playhead)  // null when not in the cache
            }
            enum CodingKeys: String, CodingKey { case id, rendition, frameCount, cachedFrames, window, whole, playhead }
        }
        let body = Residency(
            id: id, rendition: rendition, frameCount: record.metadata.frameCount, cachedFrames: held?.cachedFrames ?? [],
            window: held?.window ?? 0, whole: held?.whole ?? false, playhead: held?.playhead)
        return .json(JSONBody.encode(body), headers: ["Cache-Control": "no-store"])
    }

    func deleteImage(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        if let refusal = Authorization.check(
            request, token: settings.auth.adminToken, what: "Deleting images",
            disabledWhenEmpty: true)
        {
            return .now(.problem(refusal))
        }
        let id = request.pathParameters["id"] ?? ""
        let (store, cache, logger, derived) = (self.store, frames.cache, self.logger, frames.derived)
        return lookup.offLoop(responder) {
            do {
                let record = store.record(id, reindexing: false)
                guard try store.delete(id) else { return .unknownImage(id) }
                if let record {
                    cache.remove(id: record.frameCacheID)
                    derived.removeAll(of: record)
                }
                return HTTPResponse(status: .noContent)
            } catch ImageStore.StoreError.readOnly(let why) {
                return .problem(.conflict, detail: why + ".")
            } catch ImageStore.StoreError.unavailable(let why) {
                logger.warning("delete: storage unavailable", metadata: ["id": "\(id)", "error": "\(why)"])
                return .storageUnavailable()
            } catch {
                logger.error("delete failed", metadata: ["id": "\(id)", "error": "\(error)"])
                return .problem(.internalServerError, detail: "The image could not be deleted.")
            }
        }
    }
}
