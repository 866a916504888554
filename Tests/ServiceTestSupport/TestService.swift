import FlipbookService
import FlipbookTestSupport
import Foundation
import FrameCache
import Logging
import OutboundHTTP
import SystemResources

/// Where a test service keeps images: the data directory (`fs`), or a bucket of the shared
/// moto server with the data directory as the local cache (`s3`).
public enum Backend: String, CaseIterable, Sendable {
    case fs, s3
}

/// A Flipbook service on a free loopback port with a data directory of its own (and, on `s3`, a
/// bucket of its own unless one is given, so two services can share it as replicas do).
public final class TestService: @unchecked Sendable {
    public let server: FlipbookServer
    public let dataDirectory: String
    public let client: HTTPTestClient
    public let backend: Backend
    /// The bucket and its server, on `s3`.
    public let bucket: String?
    public let moto: MotoServer?

    /// - Parameter configure: adjusts the settings (tokens, limits, …) before start.
    public init(
        dataDirectory: String? = nil, backend: Backend = .fs, bucket: String? = nil, moto: MotoServer? = nil,
        clock: any MonotonicClock = SystemMonotonicClock(), sourceResolver: any SourceResolver = SystemResolver(),
        configure: (inout FlipbookSettings) -> Void = { _ in }
    ) throws {
        let directory: String = dataDirectory ?? Self.temporaryDirectory()
        var settings = FlipbookSettings()
        settings.server.host = "127.0.0.1"
        settings.server.port = 0
        settings.server.eventLoopThreads = 2
        settings.server.drainTimeoutSeconds = 5
        settings.server.instanceName = "test-instance"
        settings.storage.dataDir = directory
        settings.storage.libraryDirs = []
        settings.cache.maxBytes = 64 << 20
        settings.cache.decodeThreads = 2
        // A debug build on a loaded machine can take longer than the default 10 s to make a
        // preview (answered 503 then, as the 10 s were up): long, as `make openapi-check` and the
        // browser tests set it. The tests of that 503 set their own.
        settings.derived.maxWaitSeconds = 120
        settings.log.accessLog = false
        settings.ui.dir = Self.webDirectory
        self.backend = backend
        if backend == .s3 {
            let moto = try moto ?? MotoServer.shared.get()
            self.moto = moto
            let name = try bucket ?? moto.makeBucket()
            settings.storage.backend = "s3"
            settings.storage.s3.endpoint = moto.endpoint
            settings.storage.s3.bucket = name
            settings.storage.s3.prefix = "flipbook/"
            settings.storage.s3.pathStyle = true
            settings.storage.s3.accessKeyId = "test-key"
            settings.storage.s3.secretAccessKey = "test-secret"
            settings.storage.s3.requestTimeoutSeconds = 10
            self.bucket = name
        } else {
            self.bucket = nil
            self.moto = nil
        }
        configure(&settings)
        var logger = Logger(label: "flipbook.test")
        logger.logLevel = .warning
        server = try FlipbookServer(settings: settings, logger: logger, clock: clock, sourceResolver: sourceResolver)
        try server.start()
        self.dataDirectory = directory
        client = HTTPTestClient(port: server.port)
    }

    public func stop() async {
        await server.stop()
    }

    /// The repository's `web/` (the pages and the player component).
    public static let webDirectory: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("web").path

    /// A new directory, removed with the test process's scratch directory.
    public static func temporaryDirectory() -> String {
        ScratchDirectory.make("service")
    }

    /// The sum of a Prometheus counter or gauge over its label sets (`prefix` before any `{`).
    public func metric(_ name: String, where filter: String = "") throws -> Double {
        let text = try client.get("/metrics").text
        var total = 0.0
        for line in text.split(separator: "\n") where line.hasPrefix(name) && !line.hasPrefix("#") {
            let head = line.split(separator: " ")[0]
            guard head == name || head.hasPrefix(name + "{"), filter.isEmpty || head.contains(filter) else { continue }
            total += Double(line.split(separator: " ").last!) ?? 0
        }
        return total
    }

    /// Uploads `bytes`; returns the response.
    public func upload(_ bytes: [UInt8], headers: [String: String] = [:]) throws -> HTTPTestResponse {
        try client.send("POST", "/images", headers: headers, body: bytes)
    }
}

extension TestService {
    /// Runs `body` with a service holding one upload of the corpus file at `path` (and its id),
    /// and stops the service afterwards, whether `body` threw or not.
    public static func withUpload(
        of path: String, dataDirectory: String? = nil,
        configure: (inout FlipbookSettings) -> Void = { _ in },
        _ body: (TestService, String) async throws -> Void
    ) async throws {
        let service = try TestService(dataDirectory: dataDirectory, configure: configure)
        do {
            let upload = try service.upload(Corpus.bytes(path))
            guard let id = upload.json["id"] as? String else {
                throw TestFailure("uploading \(path) answered \(upload.status) without an id")
            }
            try await body(service, id)
        } catch {
            await service.stop()
            throw error
        }
        await service.stop()
    }
}
