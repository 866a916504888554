import FlipbookTestSupport
import Foundation
import FrameCache
import Logging
import SystemResources
import Testing

@testable import FlipbookService
@testable import OutboundHTTP

/// Where a test service keeps images: the data directory (`fs`), or a bucket of the shared
/// moto server with the data directory as the local cache (`s3`).
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case fs, s3
    var testDescription: String { rawValue }
}

/// A Flipbook service on a free loopback port with a data directory of its own (and, on `s3`, a
/// bucket of its own unless one is given, so two services can share it as replicas do).
final class TestService: @unchecked Sendable {
    let server: FlipbookServer
    let dataDirectory: String
    let client: HTTPTestClient
    let backend: Backend
    /// The bucket and its server, on `s3`.
    let bucket: String?
    let moto: MotoServer?

    /// - Parameter configure: adjusts the settings (tokens, limits, …) before start.
    init(
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

    func stop() async {
        await server.stop()
    }

    /// The repository's `web/` (the pages and the player component).
    static let webDirectory: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("web").path

    /// A new directory, removed with the test process's scratch directory.
    static func temporaryDirectory() -> String {
        ScratchDirectory.make("service")
    }

    /// Where the image `id` (a content id) is kept, and whether each piece exists now: on `fs`
    /// the image's bytes and its record in the data directory; on `s3` the original and the record in
    /// the bucket (read straight from moto) and the original in the local cache.
    func storedObjects(of id: String) throws -> [(what: String, exists: Bool)] {
        switch backend {
        case .fs:
            let layout = DataLayout(dataDirectory: dataDirectory)
            return [layout.imagePath(id), layout.recordPath(id)].map {
                ($0, FileManager.default.fileExists(atPath: $0))
            }
        case .s3:
            // Asked with the service's own (signed) client: moto refuses anonymous reads.
            let client = try #require(server.store.backend as? S3Backend).client
            var found: [(what: String, exists: Bool)] = []
            for key in ["flipbook/originals/" + id, "flipbook/meta/" + id + ".json"] {
                found.append(("s3://\(bucket!)/" + key, try client.send("HeadObject", method: "HEAD", key: key).status == 200))
            }
            let cached = dataDirectory + "/originals/" + id
            if FileManager.default.fileExists(atPath: cached) { found.append((cached, true)) }
            return found
        }
    }

    /// The sum of a Prometheus counter or gauge over its label sets (`prefix` before any `{`).
    func metric(_ name: String, where filter: String = "") throws -> Double {
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
    func upload(_ bytes: [UInt8], headers: [String: String] = [:]) throws -> HTTPTestResponse {
        try client.send("POST", "/images", headers: headers, body: bytes)
    }
}
