import AnimatedImage
import FrameCache
import Foundation
import HTTPServer
import Logging
import Prometheus

/// The HTTP API of the brief over an ``ImageStore`` and a ``FrameCache``: builds the router and
/// holds what the handlers share. Handlers live in extensions, one file per resource.
public final class FlipbookAPI: Sendable {
    let settings: FlipbookSettings
    let store: ImageStore
    let cache: FrameCache
    let registry: PrometheusCollectorRegistry
    let logger: Logger
    let decorator: RequestDecorator
    /// Uploads are indexed (every frame decoded once) here, off the event loops.
    let ingestQueue = DispatchQueue(label: "flipbook.ingest", attributes: .concurrent)
    /// True while the server drains (readiness answers 503).
    let isDraining: @Sendable () -> Bool

    public init(settings: FlipbookSettings, store: ImageStore, cache: FrameCache,
                registry: PrometheusCollectorRegistry, logger: Logger,
                isDraining: @escaping @Sendable () -> Bool) {
        self.settings = settings
        self.store = store
        self.cache = cache
        self.registry = registry
        self.logger = logger
        self.isDraining = isDraining
        let instance = settings.server.instanceName.isEmpty ? Self.hostName() : settings.server.instanceName
        var accessLogger = logger
        accessLogger[metadataKey: "component"] = "access"
        decorator = RequestDecorator(
            instanceName: instance,
            trustedProxies: settings.server.trustedProxies.compactMap(IPAddressRange.init),
            accessLogger: settings.log.accessLog ? accessLogger : nil,
            metricsFactory: PrometheusMetricsFactory(registry: registry))
    }

    /// The name in `X-Served-By`.
    public var instanceName: String { decorator.instanceName }

    /// Every route of the API.
    public func makeRouter() -> Router {
        var router = Router()
        let d = decorator
        router.stream(.POST, "/images", maxBodyBytes: settings.server.maxUploadBytes) { [self] request, responder in
            self.uploadSink(request, responder, name: nil)
        }
        router.stream(.PUT, "/images/:id", maxBodyBytes: settings.server.maxUploadBytes) { [self] request, responder in
            self.uploadSink(request, responder, name: request.pathParameters["id"])
        }
        router.get("/images", d.wrap(route: "/images") { [self] in self.listImages($0, $1) })
        router.get("/images/:id", d.wrap(route: "/images/:id") { [self] in self.metadata($0, $1) })
        router.delete("/images/:id", d.wrap(route: "/images/:id") { [self] in self.deleteImage($0, $1) })
        router.get("/images/:id/delays", d.wrap(route: "/images/:id/delays") { [self] in self.delays($0, $1) })
        router.get("/frames/:id/:index", d.wrap(route: "/frames/:id/:index") { [self] in self.frame($0, $1) })
        router.get("/frames/:id", d.wrap(route: "/frames/:id") { [self] in self.frameAtTime($0, $1) })
        router.get("/healthz", d.wrap(route: "/healthz") { [self] in self.health($0, $1) })
        router.get("/readyz", d.wrap(route: "/readyz") { [self] in self.readiness($0, $1) })
        router.get("/metrics", d.wrap(route: "/metrics") { [self] in self.metrics($0, $1) })
        router.get("/stats", d.wrap(route: "/stats") { [self] in self.stats($0, $1) })
        router.post("/admin/memory-pressure", maxBodyBytes: 4096,
                    d.wrap(route: "/admin/memory-pressure") { [self] in self.memoryPressure($0, $1) })
        let instance = decorator.instanceName
        router.notFoundResponse = { request in
            var response = HTTPResponse.problem(.notFound, detail: "No resource at \(request.path).")
            response.headers.set(name: "X-Served-By", value: instance)
            return response
        }
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

    /// The 404 for an id the store does not know.
    static func unknownImage(_ id: String) -> HTTPResponse {
        .problem(.notFound, detail: "No image with id '\(id)'.")
    }

    /// Whether one of the `If-None-Match` entity tags equals `etag` (weak comparison, `*` too).
    static func matches(_ request: HTTPRequest, etag: String) -> Bool {
        let values = request.headers.values(for: "If-None-Match")
        guard !values.isEmpty else { return false }
        let bare = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        for value in values {
            for tag in value.split(separator: ",") {
                let tag = tag.trimmingCharacters(in: .whitespaces)
                if tag == "*" { return true }
                let tagBare = tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
                if tagBare == bare { return true }
            }
        }
        return false
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
