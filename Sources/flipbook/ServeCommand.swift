import ArgumentParser
import FlipbookService
import FoundationEssentials
import Glibc
import Logging
import Metrics
import Prometheus

/// `flipbook serve`: the HTTP service. Settings come from `Config/flipbook.json` (or `--config`),
/// then `FLIPBOOK_*` environment variables, then these flags.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve frames, metadata and delay tables over HTTP.",
        discussion: """
            Settings: Config/flipbook.json (or --config), overridden by FLIPBOOK_<KEY> environment \
            variables (e.g. FLIPBOOK_SERVER_PORT, FLIPBOOK_CACHE_MAXBYTES), overridden by flags. \
            --set KEY=VALUE overrides any key, e.g. --set cache.pngCompressionLevel=6.
            """)

    @Option(help: "The JSON settings file (default: Config/flipbook.json when present).")
    var config: String?

    @Option(help: "Address to listen on (server.host).")
    var host: String?

    @Option(help: "Port to listen on (server.port; 0 picks a free one).")
    var port: Int?

    @Option(name: .customLong("data-dir"), help: "Where uploads are stored (storage.dataDir).")
    var dataDirectory: String?

    @Option(
        name: .customLong("library-dir"), help: "A read-only directory of images to register; repeatable (storage.libraryDirs).")
    var libraryDirectories: [String] = []

    @Option(name: .customLong("instance-name"), help: "The X-Served-By name (server.instanceName).")
    var instanceName: String?

    @Option(name: .customLong("cache-max-bytes"), help: "The frame cache's byte budget (cache.maxBytes).")
    var cacheMaxBytes: Int?

    @Option(name: .customLong("log-format"), help: "text or json (log.format).")
    var logFormat: String?

    @Option(name: .customLong("log-level"), help: "trace … critical (log.level).")
    var logLevel: String?

    @Option(name: .customLong("set"), help: ArgumentHelp("KEY=VALUE for any setting; repeatable.", valueName: "key=value"))
    var assignments: [String] = []

    func run() async throws {
        var flags: [String: String] = [:]
        if let host { flags["server.host"] = host }
        if let port { flags["server.port"] = String(port) }
        if let dataDirectory { flags["storage.dataDir"] = dataDirectory }
        if !libraryDirectories.isEmpty { flags["storage.libraryDirs"] = libraryDirectories.joined(separator: ",") }
        if let instanceName { flags["server.instanceName"] = instanceName }
        if let cacheMaxBytes { flags["cache.maxBytes"] = String(cacheMaxBytes) }
        if let logFormat { flags["log.format"] = logFormat }
        if let logLevel { flags["log.level"] = logLevel }
        let loaded = try await loadSettings(config: config, assignments: assignments, flags: flags)
        let settings = loaded.settings
        let level = Logger.Level(rawValue: settings.log.level) ?? .info
        let json = settings.log.format == "json"
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = json ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let logger = Logger(label: "flipbook")
        for warning in loaded.warnings { logger.warning("\(warning)") }

        let server: FlipbookServer
        do {
            server = try FlipbookServer(settings: settings, logger: logger, registry: registry)
        } catch {
            logger.critical("cannot start", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
        logger.info(
            "flipbook serving",
            metadata: [
                "host": "\(settings.server.host)", "port": "\(settings.server.port)",
                "instance": "\(server.instanceName)", "dataDir": "\(settings.storage.dataDir)",
            ])
        do {
            try await server.run()
        } catch {
            logger.critical("server failed", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
    }
}
