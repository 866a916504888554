import FlipbookService
import FrameCache
import Foundation
import Logging

/// A Flipbook service on a free loopback port with a data directory of its own.
final class TestService: @unchecked Sendable {
    let server: FlipbookServer
    let dataDirectory: String
    let client: HTTPTestClient

    /// - Parameter configure: adjusts the settings (tokens, limits, …) before start.
    init(dataDirectory: String? = nil, clock: any CacheClock = SystemCacheClock(),
         configure: (inout FlipbookSettings) -> Void = { _ in }) throws {
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
        configure(&settings)
        var logger = Logger(label: "flipbook.test")
        logger.logLevel = .warning
        server = try FlipbookServer(settings: settings, logger: logger, clock: clock)
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

    static func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "flipbook-test-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Uploads `bytes`; returns the response.
    func upload(_ bytes: [UInt8], headers: [String: String] = [:]) throws -> HTTPTestClient.Response {
        try client.send("POST", "/images", headers: headers, body: bytes)
    }
}

/// The shared conformance corpus beside the repository (or `$FLIPBOOK_CORPUS`).
enum Corpus {
    static let root: URL = {
        if let path = ProcessInfo.processInfo.environment["FLIPBOOK_CORPUS"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/corpus")
    }()

    struct Entry: Decodable {
        var path: String
        var negative: Bool
        /// The manifest that lists the entry, relative to the corpus root.
        var manifest: String = "manifest.json"

        private enum CodingKeys: String, CodingKey { case path, negative }
    }

    /// Every `manifest.json` under the corpus root (the top one and those of sub-corpora such
    /// as `flipbook-cases/`), relative to the root.
    static let manifests: [String] = {
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        var found: [String] = []
        while let path = walker.nextObject() as? String {
            if path == "chromium" { walker.skipDescendants(); continue }
            if (path as NSString).lastPathComponent == "manifest.json" { found.append(path) }
        }
        return found.sorted { ($0.filter { $0 == "/" }.count, $0) < ($1.filter { $0 == "/" }.count, $1) }
    }()

    /// Every input of every manifest (paths relative to the corpus root).
    static let entries: [Entry] = manifests.flatMap { manifest -> [Entry] in
        guard let data = try? Data(contentsOf: root.appendingPathComponent(manifest)),
              let list = try? JSONDecoder().decode([Entry].self, from: data) else { return [] }
        return list.map { var entry = $0; entry.manifest = manifest; return entry }
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: root.appendingPathComponent(path)))
    }

    /// Whether Chromium decoded the file (its reference directory has a meta.json with frames).
    static func chromiumDecoded(_ path: String) -> Bool {
        let meta = root.appendingPathComponent("chromium").appendingPathComponent(path).appendingPathComponent("meta.json")
        guard let data = try? Data(contentsOf: meta),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return false }
        return ((json["frameCount"] as? NSNumber)?.intValue ?? 0) > 0
    }
}

/// A clock the test moves by hand, for the store's record rechecks (no sleeping past them).
final class ManualClock: CacheClock, @unchecked Sendable {
    private let lock = NSLock()
    private var seconds = 1000.0

    func now() -> Double { lock.lock(); defer { lock.unlock() }; return seconds }

    func advance(by delta: Double) { lock.lock(); seconds += delta; lock.unlock() }
}
