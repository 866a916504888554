import AnimatedImage
import FrameCache
import Glibc
import HTTPServer
import ImageStorage
import Logging
import OutboundHTTP
import Prometheus

extension FlipbookServer {
    /// The API: every feature's routes, each a type given what it needs, built here and put on one
    /// router — the one place where the parts of the service are wired together. Lower parts
    /// (storage, the frame cache, the products) are handed in; no part builds another.
    struct Routes {
        let router: Router
        let decorator: ResponseDecorator
        let uploads: UploadSessions
        let derived: DerivedProducts
        let avifEncodes: ClientEncodeLimit

        /// What the routes need from the server that is built after them.
        struct ServerState: Sendable {
            var isDraining: @Sendable () -> Bool
            var connectionStatistics: @Sendable () -> HTTPServerStatistics?
        }

        init(
            settings: FlipbookSettings, store: ImageStore, cache: FrameCache, registry: PrometheusCollectorRegistry,
            logger: Logger, loops: Int, accessLog: AccessLog?, server: ServerState, sourceResolver: any SourceResolver
        ) {
            let lookup = RecordLookup(store: store, logger: logger)
            let policy =
                (try? RenditionPolicy(settings))
                ?? RenditionPolicy(maxOutputDimension: settings.limits.maxOutputDimension)
            let renditions = RenditionResolver(policy: policy, loops: loops)
            derived = DerivedProducts(
                settings: settings, images: store, cache: cache, budget: cache.configuration.decodeBudget,
                concurrency: cache.configuration.decodeThreads, logger: logger)
            let frames = ImageFrames(
                store: store, cache: cache, derived: derived, pngLevel: settings.cache.pngCompressionLevel)
            uploads = UploadSessions(
                settings: settings.uploads,
                encoder: RenditionEncoder(
                    png: PNGEncoder(compressionLevel: cache.configuration.pngCompressionLevel),
                    webp: cache.configuration.webpEncoder),
                cache: cache)
            let tracker = UploadTracker(sessions: uploads, frames: frames, logger: logger)
            let ingest = ImageIngest(store: store, frames: frames, logger: logger)
            let sourceServices = SourceServices(settings: settings, registry: registry, resolver: sourceResolver)
            let sources = SourceRoutes(
                services: sourceServices, ingest: ingest, tracker: tracker, settings: settings, logger: logger)
            decorator = Self.decorator(settings, loops: loops, accessLog: accessLog)
            let operations = OperationsRoutes(
                store: store, cache: cache, derived: derived, registry: registry, decorator: decorator,
                isDraining: server.isDraining, connectionStatistics: server.connectionStatistics,
                adminToken: settings.auth.adminToken, logger: logger)
            avifEncodes = ClientEncodeLimit(
                perClient: settings.limits.avifFramesPerClient,
                clients: ClientAddresses(trustedProxies: decorator.trustedProxies))
            let serving = FrameServing(
                lookup: lookup, renditions: renditions, frames: frames, avifEncodes: avifEncodes, logger: logger)
            let uploadFrames = UploadFrameRoutes(tracker: tracker, serving: serving, settings: settings)

            var router = Router()
            ImageRoutes(
                lookup: lookup, renditions: renditions, frames: frames, ingest: ingest, sources: sources,
                settings: settings, logger: logger
            ).register(in: &router)
            UploadRoutes(tracker: tracker, ingest: ingest, settings: settings).register(in: &router)
            sources.register(in: &router)
            DerivedRoutes(lookup: lookup, renditions: renditions, derived: derived, settings: settings).register(in: &router)
            FrameRoutes(serving: serving, uploads: uploadFrames).register(in: &router)
            operations.register(in: &router)
            if let assets = Self.webAssets(settings, logger: logger) {
                UIRoutes(webAssets: assets, lookup: lookup).register(in: &router)
            }
            if let signing = sourceServices.signing { router.admission = { signing.refusal($0) } }
            // CORS headers reach every response (404 and 405 included) through the response hook.
            let cors = decorator.cors
            router.optionsResponse = { request, allowed in cors.preflight(request, allowed: allowed) }
            self.router = router
        }

        /// What every response gets on its way out: `X-Served-By`, CORS, metrics, the access log.
        private static func decorator(_ settings: FlipbookSettings, loops: Int, accessLog: AccessLog?) -> ResponseDecorator {
            let instance = settings.server.instanceName.isEmpty ? hostName() : settings.server.instanceName
            return ResponseDecorator(
                instanceName: instance,
                trustedProxies: settings.server.trustedProxies.compactMap(IPAddressRange.init),
                accessLog: accessLog, metrics: HTTPMetrics(loops: loops),
                cors: CORSPolicy(origins: settings.server.corsOrigins))
        }

        /// The browser pages and the player component; nil when `ui.dir` is empty or unreadable.
        private static func webAssets(_ settings: FlipbookSettings, logger: Logger) -> WebAssets? {
            guard !settings.ui.dir.isEmpty else { return nil }
            do {
                return try WebAssets.load(directory: settings.ui.dir)
            } catch {
                logger.warning("no web UI: ui.dir cannot be read", metadata: ["dir": "\(settings.ui.dir)", "error": "\(error)"])
                return nil
            }
        }

        static func hostName() -> String {
            var buffer = [CChar](repeating: 0, count: 256)
            guard gethostname(&buffer, buffer.count - 1) == 0 else { return "flipbook" }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}
