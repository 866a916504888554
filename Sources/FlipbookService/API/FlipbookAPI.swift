import AnimatedImage
import Foundation
import FrameCache
import HTTPServer
import Logging
import Prometheus

/// The HTTP API of the brief over an ``ImageStore`` and a ``FrameCache``: builds the router and
/// holds what the handlers share. Handlers live in extensions, one file per resource.
public final class FlipbookAPI: Sendable {
    let settings: FlipbookSettings
    /// Presets, the default format and the output limit of renditions (validated with the
    /// settings; defaults if they were not).
    let renditions: RenditionPolicy
    let store: ImageStore
    let cache: FrameCache
    let registry: PrometheusCollectorRegistry
    let logger: Logger
    /// The HTTP server's response hook: `X-Served-By`, CORS, metrics and the access log of every
    /// response.
    let decorator: ResponseDecorator
    /// The browser pages and the player component (nil when `ui.dir` is empty or unreadable).
    let webAssets: WebAssets?
    /// Uploads are indexed (every frame decoded once) here, off the event loops.
    let ingestQueue = DispatchQueue(label: "flipbook.ingest", attributes: .concurrent)
    /// Lookups that wait on remote storage run here, off the event loops.
    let storageQueue = DispatchQueue(label: "flipbook.storage", attributes: .concurrent)
    /// True while the server drains (readiness answers 503).
    let isDraining: @Sendable () -> Bool
    /// The HTTP server's connection counts, for `/metrics` (nil before it runs).
    let connectionStatistics: @Sendable () -> HTTPServerStatistics?
    /// Sources by URL and signed URLs.
    let sources: SourceServices
    /// Storyboards and previews, made once and kept.
    let derived: DerivedProducts
    /// Upload sessions (`/uploads`): frames served while the bytes arrive.
    let uploads: UploadSessions
    /// Rendition queries resolved before, per event loop: the hit path of scaled frames.
    let resolvedRenditions: ResolvedRenditions

    /// - Parameters:
    ///   - loops: the HTTP server's event loops (metrics and the access log keep per-loop state).
    ///   - accessLog: where access-log lines go; nil when `log.accessLog` is off.
    public init(
        settings: FlipbookSettings, store: ImageStore, cache: FrameCache,
        registry: PrometheusCollectorRegistry, logger: Logger, loops: Int = 1, accessLog: AccessLog? = nil,
        isDraining: @escaping @Sendable () -> Bool,
        connectionStatistics: @escaping @Sendable () -> HTTPServerStatistics? = { nil },
        sourceResolver: any SourceResolver = SystemResolver()
    ) {
        self.settings = settings
        self.renditions = (try? RenditionPolicy(settings)) ?? Self.defaultRenditions
        resolvedRenditions = ResolvedRenditions(loops: loops)
        self.store = store
        self.cache = cache
        self.registry = registry
        self.logger = logger
        self.isDraining = isDraining
        self.connectionStatistics = connectionStatistics
        sources = SourceServices(settings: settings, registry: registry, resolver: sourceResolver)
        derived = DerivedProducts(
            settings: settings, images: store, cache: cache, budget: cache.configuration.decodeBudget,
            concurrency: cache.configuration.decodeThreads, logger: logger)
        uploads = UploadSessions(
            settings: settings.uploads,
            encoder: RenditionEncoder(
                png: PNGEncoder(compressionLevel: cache.configuration.pngCompressionLevel),
                webp: cache.configuration.webpEncoder),
            cache: cache)
        let instance = settings.server.instanceName.isEmpty ? Self.hostName() : settings.server.instanceName
        decorator = ResponseDecorator(
            instanceName: instance,
            trustedProxies: settings.server.trustedProxies.compactMap(IPAddressRange.init),
            accessLog: accessLog, metrics: HTTPMetrics(loops: loops),
            cors: CORSPolicy(origins: settings.server.corsOrigins))
        if settings.ui.dir.isEmpty {
            webAssets = nil
        } else {
            do {
                webAssets = try WebAssets.load(directory: settings.ui.dir)
            } catch {
                logger.warning("no web UI: ui.dir cannot be read", metadata: ["dir": "\(settings.ui.dir)", "error": "\(error)"])
                webAssets = nil
            }
        }
    }

    private static let defaultRenditions = try! RenditionPolicy(FlipbookSettings())

    /// The name in `X-Served-By`.
    public var instanceName: String { decorator.instanceName }

    /// What the HTTP server hands every response to.
    public var responseHook: any HTTPResponseHook { decorator }

    /// Every route of the API.
    public func makeRouter() -> Router {
        var router = Router()
        router.stream(.POST, "/images", maxBodyBytes: settings.server.maxUploadBytes) { [self] request, responder in
            self.uploadSink(request, responder, name: nil)
        }
        router.stream(.PUT, "/images/:id", maxBodyBytes: settings.server.maxUploadBytes) { [self] request, responder in
            self.uploadSink(request, responder, name: request.pathParameters["id"])
        }
        router.post("/uploads", maxBodyBytes: 4096) { [self] in self.createUpload($0, $1) }
        router.stream(.PUT, "/uploads/:uploadId", maxBodyBytes: settings.server.maxUploadBytes) { [self] request, responder in
            self.uploadSessionSink(request, responder)
        }
        router.get("/uploads/:uploadId") { [self] in self.uploadStatus($0, $1) }
        router.post("/images/:id/refresh", maxBodyBytes: 4096) { [self] in self.refreshSource($0, $1) }
        router.get("/images") { [self] in self.listImages($0, $1) }
        router.get("/images/:id") { [self] in self.metadata($0, $1) }
        router.delete("/images/:id") { [self] in self.deleteImage($0, $1) }
        router.get("/images/:id/delays") { [self] in self.delays($0, $1) }
        router.get("/images/:id/cache") { [self] in self.cacheResidency($0, $1) }
        router.get("/images/:id/preview") { [self] in self.preview($0, $1) }
        router.get("/images/:id/storyboard") { [self] in self.storyboard($0, $1) }
        router.get("/images/:id/storyboard.vtt") { [self] in self.storyboardTrack($0, $1) }
        router.get("/derived/:sha/:product/:file") { [self] in self.derivedFile($0, $1) }
        router.get("/frames/:id/:index") { [self] in self.frame($0, $1) }
        router.get("/frames/:id") { [self] in self.frameAtTime($0, $1) }
        router.get("/healthz") { [self] in self.health($0, $1) }
        router.get("/readyz") { [self] in self.readiness($0, $1) }
        router.get("/metrics") { [self] in self.metrics($0, $1) }
        router.get("/stats") { [self] in self.stats($0, $1) }
        router.post("/admin/memory-pressure", maxBodyBytes: 4096) { [self] in self.memoryPressure($0, $1) }
        if webAssets != nil {
            router.get("/") { [self] in self.browserPage($0, $1) }
            router.get("/player/:id") { [self] in self.playerPage($0, $1) }
            router.get("/ui/:file") { [self] in self.uiFile($0, $1) }
        }
        if let signing = sources.signing { router.admission = { signing.refusal($0) } }
        // CORS headers reach every response (404 and 405 included) through the response hook.
        let cors = decorator.cors
        router.optionsResponse = { request, allowed in cors.preflight(request, allowed: allowed) }
        return router
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "flipbook" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: Shared answers

    static func json(_ bytes: [UInt8], status: HTTPStatus = .ok, headers extra: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = extra
        headers.set(name: "Content-Type", value: "application/json")
        return HTTPResponse(status: status, headers: headers, body: bytes)
    }

    static func encodeJSON<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
    }

    /// The problem document of a refusal.
    static func problem(_ error: HTTPError) -> HTTPResponse {
        .problem(error.status, detail: error.detail, headers: error.headers)
    }

    /// Calls `body` with the record of `id` and its metadata document (nil when there is no such
    /// image): at once when the store knows it without waiting on storage, else from the storage
    /// queue, answering through `responder`. With `needsOriginal`, the image's original is made
    /// local first, so the frame cache never waits on the network. Storage that cannot be reached
    /// gets a 503 with `Retry-After`.
    func withRecord(
        _ id: String, _ responder: HTTPResponder, needsOriginal: Bool = false,
        _ body: @escaping @Sendable (StoredImage?, [UInt8]) -> HTTPHandlerResult
    ) -> HTTPHandlerResult {
        switch store.quickLookup(id) {
        case .found(let record, let json) where !needsOriginal || store.hasLocalOriginal(record):
            return body(record, json)
        case .missing:
            return body(nil, [])
        case .found, .needsStorage:
            break
        }
        let (store, logger) = (self.store, self.logger)
        if needsOriginal { store.prefetchOriginal(ofContentID: id) }
        storageQueue.async {
            let result: HTTPHandlerResult
            do throws(StorageFailure) {
                let cached = try store.resolve(id)
                if let cached, needsOriginal { try store.fetchOriginal(cached.record) }
                result = body(cached?.record, cached?.metadataJSON ?? [])
            } catch {
                result = .now(Self.storageFailure(error, logger: logger))
            }
            if case .now(let response) = result { responder.respond(response) }
        }
        return .later
    }

    /// Runs `work` at once when storage is local, else on the storage queue (its answer goes
    /// through `responder`).
    func offLoop(_ responder: HTTPResponder, _ work: @escaping @Sendable () -> HTTPResponse) -> HTTPHandlerResult {
        if store.lookupsAreLocal { return .now(work()) }
        storageQueue.async { responder.respond(work()) }
        return .later
    }

    /// Seconds a client is asked to wait before retrying when storage is unreachable.
    static let storageRetryAfterSeconds = 2

    /// The answer when storage failed: 503 with `Retry-After` when it cannot be reached, else 500
    /// (logged).
    static func storageFailure(_ failure: StorageFailure, logger: Logger) -> HTTPResponse {
        switch failure {
        case .unavailable(let why):
            logger.warning("storage unavailable", metadata: ["error": "\(why)"])
            return storageUnavailable()
        case .failed(let why):
            logger.error("storage failed", metadata: ["error": "\(why)"])
            return .problem(.internalServerError, detail: "Storage failed; the error is logged.")
        }
    }

    static func storageUnavailable(_ what: String = "Storage cannot be reached right now") -> HTTPResponse {
        .problem(
            .serviceUnavailable, detail: "\(what); retry shortly.",
            headers: ["Retry-After": String(storageRetryAfterSeconds)])
    }

    /// The 404 for an id the store does not know.
    static func unknownImage(_ id: String) -> HTTPResponse {
        .problem(.notFound, detail: "No image with id '\(id)'.")
    }

    /// Whether one of the `If-None-Match` entity tags equals `etag` (weak comparison, `*` too).
    static func matches(_ request: HTTPRequest, etag: String) -> Bool {
        request.headers.ifNoneMatchMatches(etag)
    }

    /// A 304 carrying the validators and caching headers the 200 would have had.
    static func notModified(etag: String, cacheControl: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add(name: "ETag", value: etag)
        headers.add(name: "Cache-Control", value: cacheControl)
        return HTTPResponse(status: .notModified, headers: headers)
    }
}

#if canImport(Glibc)
import Glibc
#endif
