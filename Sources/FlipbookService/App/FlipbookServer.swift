import AnimatedImage
import FoundationEssentials
import FrameCache
import Glibc
import HTTPServer
import ImageStorage
import Logging
import Metrics
import OutboundHTTP
import Prometheus
import ServiceLifecycle
import SystemResources
import UnixSignals

/// The service assembled from its settings: the image store, the frame cache, the API (its
/// routes, ``Routes``) and the HTTP server, plus the memory-pressure sources (cgroup monitor,
/// SIGUSR1). `run()` serves until SIGTERM/SIGINT, then drains: readiness turns 503, in-flight
/// requests finish, and the process exits within `server.drainTimeoutSeconds`.
public final class FlipbookServer: Sendable {
    public let settings: FlipbookSettings
    public let store: ImageStore
    public let cache: FrameCache
    /// What decodes and upload verifications may hold at once (`limits.maxDecodeBytes`).
    public let decodeBudget: DecodeMemoryBudget
    public let http: HTTPServer
    public let registry: PrometheusCollectorRegistry
    /// The access log, when `log.accessLog` is on.
    public let accessLog: AccessLog?
    /// The name in `X-Served-By`.
    public let instanceName: String
    /// Upload sessions (`/uploads`), for tests.
    let uploads: UploadSessions
    /// Storyboards and previews, for tests.
    let derived: DerivedProducts
    /// Each client's AVIF frame encodes under way, for tests.
    let avifEncodes: ClientEncodeLimit
    private let logger: Logger
    private let monitor: MemoryPressureMonitor

    /// Builds everything; nothing listens until `start()` or `run()`.
    /// - Parameter registry: where metrics go (the process's, or a test's own).
    /// - Parameter clock: what the store's record rechecks are timed by (tests drive it).
    /// - Parameter sourceResolver: how source URLs' host names are resolved (tests inject names).
    public init(
        settings: FlipbookSettings, logger: Logger = Logger(label: "flipbook"),
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        clock: any MonotonicClock = SystemMonotonicClock(),
        sourceResolver: any SourceResolver = SystemResolver()
    ) throws {
        self.settings = settings
        self.logger = logger
        self.registry = registry
        // The event loops: the store and the cache keep a table per loop for their hot lookups.
        let loops = settings.server.eventLoopThreads > 0 ? settings.server.eventLoopThreads : CPULimit.usableCores
        let memory = MemoryLimits.detect()
        // One decode-memory budget for the cache's decode threads and upload verification.
        decodeBudget = Self.decodeBudget(for: settings, memory: memory)
        store = try ImageStore.open(
            settings: settings, clock: clock, readers: loops, decodeBudget: decodeBudget,
            metricsFactory: PrometheusMetricsFactory(registry: registry), logger: logger)
        FrameCache.configureProcessAllocator()
        cache = FrameCache(
            configuration: Self.cacheConfiguration(settings, memory: memory, loops: loops, decodeBudget: decodeBudget),
            metricsFactory: PrometheusMetricsFactory(registry: registry))
        monitor = MemoryPressureMonitor(cache: cache, settings: Self.pressureSettings(settings))
        accessLog =
            settings.log.accessLog
            ? try AccessLog(
                destination: settings.log.accessLogFile.isEmpty ? .standardError : .file(settings.log.accessLogFile),
                format: settings.log.format == "json" ? .json : .text, loops: loops)
            : nil
        let box = ServerBox()
        let routes = Routes(
            settings: settings, store: store, cache: cache, registry: registry, logger: logger, loops: loops,
            accessLog: accessLog,
            server: Routes.ServerState(
                isDraining: { box.server?.isDraining ?? false }, connectionStatistics: { box.server?.statistics }),
            sourceResolver: sourceResolver)
        (uploads, derived, avifEncodes) = (routes.uploads, routes.derived, routes.avifEncodes)
        instanceName = routes.decorator.instanceName
        http = HTTPServer(
            configuration: Self.httpConfiguration(settings, loops: loops), router: routes.router, logger: logger,
            hook: routes.decorator)
        box.server = http
        logger.info(
            "frame cache ready",
            metadata: [
                "budgetBytes": "\(cache.configuration.budgetBytes)", "decodeBudgetBytes": "\(decodeBudget.capacityBytes)",
                "memoryLimitBytes": "\(memory.limitBytes)",
                "fromCgroup": "\(memory.fromCgroup)", "decodeThreads": "\(cache.configuration.decodeThreads)",
            ])
    }

    /// The decode-memory budget of a process of `settings` (`limits.maxDecodeBytes`), shared by its
    /// decode threads and upload verification; `flipbook import` sizes its own the same way.
    public static func decodeBudget(for settings: FlipbookSettings, memory: MemoryLimits) -> DecodeMemoryBudget {
        DecodeMemoryBudget(
            capacityBytes: settings.limits.decodeBudgetBytes(memory), maxWaiting: settings.cache.maxWaitingRequests)
    }

    /// The frame cache's configuration: its byte budget (`cache.maxBytes`, else a fraction of the
    /// memory limit), decode threads, window policy and the rest of `cache.*`.
    private static func cacheConfiguration(
        _ settings: FlipbookSettings, memory: MemoryLimits, loops: Int, decodeBudget: DecodeMemoryBudget
    ) -> FrameCacheConfiguration {
        let budget =
            settings.cache.maxBytes > 0
            ? settings.cache.maxBytes
            : memory.cacheBudget(fractionOfLimit: settings.cache.memoryFraction)
        var configuration = FrameCacheConfiguration(
            budgetBytes: budget,
            decodeThreads: settings.cache.decodeThreads > 0 ? settings.cache.decodeThreads : CPULimit.usableCores,
            window: settings.cache.window,
            checkpointInterval: settings.cache.checkpointInterval,
            pngCompressionLevel: settings.cache.pngCompressionLevel,
            maxWaitingRequests: settings.cache.maxWaitingRequests)
        configuration.hitTables = loops
        configuration.frameArena = settings.cache.frameArena
        configuration.decodeBudget = decodeBudget
        configuration.decodeAheadRenditions = settings.renditions.decodeAheadPerImage
        return configuration
    }

    private static func pressureSettings(_ settings: FlipbookSettings) -> MemoryPressureMonitor.Settings {
        var monitor = MemoryPressureMonitor.Settings()
        monitor.interval = settings.cache.pressurePollSeconds
        monitor.warningFraction = settings.cache.pressureWarningFraction
        monitor.criticalFraction = settings.cache.pressureCriticalFraction
        return monitor
    }

    /// The HTTP server's configuration from `server.*`.
    private static func httpConfiguration(_ settings: FlipbookSettings, loops: Int) -> HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration(host: settings.server.host, port: settings.server.port)
        configuration.eventLoopThreads = loops
        configuration.requestIDHeader = ResponseDecorator.requestIDHeader
        configuration.maxConnections = settings.server.maxConnections
        configuration.maxRequestLineBytes = settings.server.maxRequestLineBytes
        configuration.maxHeaderBytes = settings.server.maxHeaderBytes
        configuration.maxHeaderFields = settings.server.maxHeaderFields
        configuration.headerReadTimeout = .milliseconds(Int(settings.server.headerTimeoutSeconds * 1000))
        configuration.bodyReadIdleTimeout = .milliseconds(Int(settings.server.bodyIdleTimeoutSeconds * 1000))
        configuration.keepAliveIdleTimeout = .milliseconds(Int(settings.server.keepAliveTimeoutSeconds * 1000))
        configuration.drainTimeout = .milliseconds(Int(settings.server.drainTimeoutSeconds * 1000))
        return configuration
    }

    /// The bound port once started.
    public var port: Int { http.port }

    /// Binds and serves in the background (tests); stop with `stop()`.
    public func start() throws {
        try http.start()
        monitor.start()
    }

    /// Drains and stops; every access-log line is written before it returns.
    public func stop() async {
        http.shutdown()
        await http.waitUntilStopped()
        accessLog?.close()
        monitor.stop()
        cache.shutdown()
    }

    /// Serves until SIGTERM or SIGINT, then drains (writing the last access-log lines). SIGUSR1
    /// raises a memory-pressure warning; SIGHUP reopens the access-log file.
    public func run() async throws {
        monitor.start()
        defer {
            accessLog?.close()
            monitor.stop()
            cache.shutdown()
        }
        let pressureSignals = PressureSignalService(cache: cache, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: http), .init(service: pressureSignals)]
        if let accessLog { services.append(.init(service: AccessLogReopenService(accessLog: accessLog))) }
        let group = ServiceGroup(
            configuration: .init(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
        logger.info("stopped")
    }
}

/// Lets the readiness check see the server that is built after the API.
private final class ServerBox: @unchecked Sendable {
    var server: HTTPServer?
}

/// Reopens the access-log file on SIGHUP, after logrotate moved it away.
struct AccessLogReopenService: Service {
    let accessLog: AccessLog

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            accessLog.reopen()
        }
    }
}

/// Turns SIGUSR1 into a memory-pressure warning, the way an OS memory warning reaches an app.
struct PressureSignalService: Service {
    let cache: FrameCache
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sigusr1)
        for await _ in signals.cancelOnGracefulShutdown() {
            logger.notice("memory pressure raised", metadata: ["level": "warning", "source": "SIGUSR1"])
            cache.memoryPressure(.warning, source: "signal")
        }
    }
}
