import AnimatedImage
import FrameCache
import Foundation
import HTTPServer
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import SystemResources
import UnixSignals

/// The service assembled from its settings: the image store, the frame cache, the API and the
/// HTTP server, plus the memory-pressure sources (cgroup monitor, SIGUSR1). `run()` serves until
/// SIGTERM/SIGINT, then drains: readiness turns 503, in-flight requests finish, and the process
/// exits within `server.drainTimeoutSeconds`.
public final class FlipbookServer: Sendable {
    public let settings: FlipbookSettings
    public let store: ImageStore
    public let cache: FrameCache
    public let api: FlipbookAPI
    public let http: HTTPServer
    public let registry: PrometheusCollectorRegistry
    private let logger: Logger
    private let monitor: MemoryPressureMonitor

    /// Builds everything; nothing listens until `start()` or `run()`.
    /// - Parameter registry: where metrics go (the process's, or a test's own).
    /// - Parameter clock: what the store's record rechecks are timed by (tests drive it).
    public init(settings: FlipbookSettings, logger: Logger = Logger(label: "flipbook"),
                registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
                clock: any CacheClock = SystemCacheClock()) throws {
        self.settings = settings
        self.logger = logger
        self.registry = registry
        store = try ImageStore(dataDirectory: settings.storage.dataDir, libraryDirectories: settings.storage.libraryDirs,
                               limits: settings.limits.decodeLimits, recheckSeconds: settings.storage.recheckSeconds,
                               clock: clock, logger: logger)
        FrameCache.configureProcessAllocator()
        let memory = MemoryLimits.detect()
        let budget = settings.cache.maxBytes > 0
            ? settings.cache.maxBytes
            : memory.cacheBudget(fractionOfLimit: settings.cache.memoryFraction)
        cache = FrameCache(configuration: FrameCacheConfiguration(
            budgetBytes: budget,
            decodeThreads: settings.cache.decodeThreads > 0 ? settings.cache.decodeThreads : CPULimit.usableCores,
            window: WindowPolicy(wholeAnimationBytes: settings.cache.wholeAnimationBytes,
                                 minimumWindow: settings.cache.minimumWindow,
                                 lookaheadMs: settings.cache.lookaheadMs),
            checkpointInterval: settings.cache.checkpointInterval,
            pngCompressionLevel: settings.cache.pngCompressionLevel,
            maxWaitingRequests: settings.cache.maxWaitingRequests),
            metricsFactory: PrometheusMetricsFactory(registry: registry))
        var monitorSettings = MemoryPressureMonitor.Settings()
        monitorSettings.interval = settings.cache.pressurePollSeconds
        monitorSettings.warningFraction = settings.cache.pressureWarningFraction
        monitorSettings.criticalFraction = settings.cache.pressureCriticalFraction
        monitor = MemoryPressureMonitor(cache: cache, settings: monitorSettings)

        let box = ServerBox()
        api = FlipbookAPI(settings: settings, store: store, cache: cache, registry: registry, logger: logger,
                          isDraining: { box.server?.isDraining ?? false })
        var configuration = HTTPServerConfiguration(host: settings.server.host, port: settings.server.port)
        if settings.server.eventLoopThreads > 0 { configuration.eventLoopThreads = settings.server.eventLoopThreads }
        configuration.maxConnections = settings.server.maxConnections
        configuration.maxRequestLineBytes = settings.server.maxRequestLineBytes
        configuration.maxHeaderBytes = settings.server.maxHeaderBytes
        configuration.maxHeaderFields = settings.server.maxHeaderFields
        configuration.headerReadTimeout = .milliseconds(Int(settings.server.headerTimeoutSeconds * 1000))
        configuration.bodyReadIdleTimeout = .milliseconds(Int(settings.server.bodyIdleTimeoutSeconds * 1000))
        configuration.keepAliveIdleTimeout = .milliseconds(Int(settings.server.keepAliveTimeoutSeconds * 1000))
        configuration.drainTimeout = .milliseconds(Int(settings.server.drainTimeoutSeconds * 1000))
        http = HTTPServer(configuration: configuration, router: api.makeRouter(), logger: logger)
        box.server = http
        logger.info("frame cache ready", metadata: [
            "budgetBytes": "\(budget)", "memoryLimitBytes": "\(memory.limitBytes)",
            "fromCgroup": "\(memory.fromCgroup)", "decodeThreads": "\(cache.configuration.decodeThreads)"])
    }

    /// The bound port once started.
    public var port: Int { http.port }

    /// Binds and serves in the background (tests); stop with `stop()`.
    public func start() throws {
        try http.start()
        monitor.start()
    }

    /// Drains and stops.
    public func stop() async {
        http.shutdown()
        await http.waitUntilStopped()
        monitor.stop()
        cache.shutdown()
    }

    /// Serves until SIGTERM or SIGINT, then drains. SIGUSR1 raises a memory-pressure warning.
    public func run() async throws {
        monitor.start()
        defer {
            monitor.stop()
            cache.shutdown()
        }
        let pressureSignals = PressureSignalService(cache: cache, logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: http), .init(service: pressureSignals)],
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
