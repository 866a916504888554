import AnimatedImage
import FlipbookTestSupport
import Foundation
import Logging
import ServiceTestSupport
import Synchronization
import Testing

@testable import FlipbookService
@testable import ImageStorage

/// `storage.backend = s3` beyond the shared API contract (which ``EndToEndTests`` runs on both
/// backends): what lands in the bucket, read back with boto3; multipart uploads; the local cache
/// of originals and the S3 calls a frame costs; replicas without a shared disk; an S3 outage.
@Suite("S3 backend", .serialized, .ownThreads)
struct S3BackendTests {
    static func sha(_ bytes: [UInt8]) -> String { ContentHash.sha256Hex(bytes) }

    /// Runs Tests/s3/read_back.py (boto3) against the service's bucket; fails the test with its
    /// output when it finds a mismatch.
    static func readBack(_ service: TestService, _ arguments: [String]) throws {
        let python = try #require(
            MotoServer.tool("python3", environment: "FLIPBOOK_S3_PYTHON"),
            "no python3 with boto3: run `make test` (it makes .build-s3-venv)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments =
            [
                MotoServer.repository.appendingPathComponent("Tests/s3/read_back.py").path,
                "--endpoint", service.moto!.endpoint, "--bucket", service.bucket!, "--prefix", "flipbook/",
            ]
            + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        print(text, terminator: "")
        #expect(process.terminationStatus == 0, "\(text)")
    }

    /// A valid GIF of at least `size` bytes: `base` with a comment extension of random bytes
    /// after its global colour table (decoders skip comments; the frames are `base`'s).
    static func paddedGIF(_ base: [UInt8], to size: Int) -> [UInt8] {
        let packed = base[10]
        let tableBytes = packed & 0x80 != 0 ? 3 << (Int(packed & 7) + 1) : 0
        let insertAt = 13 + tableBytes
        var comment: [UInt8] = [0x21, 0xFE]
        var generator = SystemRandomNumberGenerator()
        while comment.count < size {
            comment.append(255)
            for _ in 0..<255 { comment.append(UInt8.random(in: 0...255, using: &generator)) }
        }
        comment.append(0)
        return Array(base[..<insertAt]) + comment + Array(base[insertAt...])
    }

    @Test func whatFlipbookWritesIsReadBackByBoto3() async throws {
        let service = try TestService(backend: .s3) { $0.auth.adminToken = "t" }
        let gif = try Corpus.bytes("wuffs/muybridge.gif")
        let other = try Corpus.bytes("pillow/gif/iss634.gif")
        let apng = try Corpus.bytes("image-rs-image/images/png/apng/ball.png")
        #expect(try service.upload(gif).status == 201)
        #expect(try service.client.send("PUT", "/images/clip.gif", body: other).status == 201)
        try Self.readBack(service, ["--content-id", Self.sha(gif), "--name", "clip.gif=\(Self.sha(other))"])

        // Replacing the name lets its old original go (nothing else uses it).
        #expect(try service.client.send("PUT", "/images/clip.gif", body: apng).status == 200)
        try Self.readBack(service, ["--name", "clip.gif=\(Self.sha(apng))", "--gone", Self.sha(other)])

        // A name and a content id share one original: deleting the content id keeps it for the name.
        #expect(try service.client.send("PUT", "/images/same.gif", body: gif).status == 201)
        #expect(
            try service.client.send("DELETE", "/images/\(Self.sha(gif))", headers: ["Authorization": "Bearer t"]).status == 204)
        #expect(try service.client.get("/images/\(Self.sha(gif))").status == 404)
        try Self.readBack(service, ["--name", "same.gif=\(Self.sha(gif))"])
        let cold = try TestService(backend: .s3, bucket: service.bucket)  // nothing local: from the bucket
        #expect(try cold.client.get("/frames/same.gif/4").body == (try service.client.get("/frames/same.gif/4").body))
        #expect(try service.client.send("DELETE", "/images/same.gif", headers: ["Authorization": "Bearer t"]).status == 204)
        try Self.readBack(service, ["--gone", Self.sha(gif)])
        await cold.stop()
        await service.stop()
    }

    @Test func largeUploadsGoUpInPartsAndAColdReplicaServesThem() async throws {
        let service = try TestService(backend: .s3) {
            $0.storage.s3.multipartThresholdBytes = 5 << 20
            $0.storage.s3.partBytes = 5 << 20
        }
        let big = Self.paddedGIF(try Corpus.bytes("wuffs/muybridge.gif"), to: 12 << 20)
        let response = try service.upload(big)
        #expect(response.status == 201, "\(response.text)")
        #expect(response.json["frameCount"] as? Int == 15)
        try Self.readBack(service, ["--content-id", Self.sha(big), "--multipart", Self.sha(big)])
        let cold = try TestService(backend: .s3, bucket: service.bucket)
        #expect(
            try cold.client.get("/frames/\(Self.sha(big))/7").body == (try service.client.get("/frames/\(Self.sha(big))/7").body))
        #expect(FileManager.default.fileExists(atPath: cold.dataDirectory + "/originals/" + Self.sha(big)))
        await cold.stop()
        await service.stop()
    }

    @Test func aFrameOfALocalOriginalCostsNoS3Call() async throws {
        let clock = ManualClock()
        let uploader = try TestService(backend: .s3)
        let gif = try Corpus.bytes("pillow/gif/iss634.gif")
        let id = try #require(try uploader.upload(gif).json["id"] as? String)
        let replica = try TestService(backend: .s3, bucket: uploader.bucket, clock: clock)

        // Cold: the record and the original come from S3, once.
        let s3Before = try replica.metric("flipbook_s3_requests_total")
        #expect(try replica.client.get("/frames/\(id)/0").status == 200)
        let coldCalls = try replica.metric("flipbook_s3_requests_total") - s3Before
        #expect(coldCalls == 2, "GetObject meta + GetObject original, got \(coldCalls)")
        #expect(try replica.metric("flipbook_s3_local_cache_fills_total") == 1)

        // Warm: frames, metadata and delays of the image make no S3 call at all.
        let warm = try replica.metric("flipbook_s3_requests_total")
        for k in 0..<42 {
            #expect(try replica.client.get("/frames/\(id)/\(k)").status == 200)
        }
        #expect(try replica.client.get("/images/\(id)").status == 200)
        #expect(try replica.client.get("/images/\(id)/delays").status == 200)
        #expect(try replica.client.get("/frames/\(id)?t=700").status == 200)
        #expect(try replica.metric("flipbook_s3_requests_total") == warm)

        // Past the recheck interval the record is checked (one HEAD), then trusted again.
        clock.advance(by: replica.server.store.recheckSeconds)
        #expect(try replica.client.get("/frames/\(id)/1").status == 200)
        #expect(try replica.metric("flipbook_s3_requests_total", where: "HeadObject") == 1)
        #expect(try replica.client.get("/frames/\(id)/2").status == 200)
        #expect(try replica.metric("flipbook_s3_requests_total") == warm + 1)
        await replica.stop()
        await uploader.stop()
    }

    @Test func theLocalCacheKeepsItsByteBudget() async throws {
        let a = try Corpus.bytes("wuffs/muybridge.gif")
        let b = try Corpus.bytes("pillow/gif/iss634.gif")
        let c = try Corpus.bytes("image-rs-image/images/png/apng/ball.png")
        let uploader = try TestService(backend: .s3)
        for bytes in [a, b, c] { #expect(try uploader.upload(bytes).status == 201) }
        // Room for b (277 kB) and one small file, not for all three.
        let replica = try TestService(backend: .s3, bucket: uploader.bucket) {
            $0.storage.s3.localCacheBytes = b.count + max(a.count, c.count) + 100
        }
        for bytes in [a, b, c] {
            #expect(try replica.client.get("/frames/\(Self.sha(bytes))/0").status == 200)
        }
        let cached = try FileManager.default.contentsOfDirectory(atPath: replica.dataDirectory + "/originals")
        #expect(Set(cached) == [Self.sha(b), Self.sha(c)], "least recently used goes first")
        #expect(try replica.metric("flipbook_s3_local_cache_bytes") == Double(b.count + c.count))
        #expect(try replica.metric("flipbook_s3_local_cache_evictions_total") == 1)
        // A decoder may still hold the evicted file's mapping (valid after the unlink); a replica
        // that never mapped it fetches it again.
        #expect(try replica.client.get("/frames/\(Self.sha(a))/5").status == 200)
        let fresh = try TestService(backend: .s3, bucket: uploader.bucket) { $0.storage.s3.localCacheBytes = 1 }
        for bytes in [a, b, a] {
            #expect(try fresh.client.get("/frames/\(Self.sha(bytes))/1").status == 200)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: fresh.dataDirectory + "/originals").count == 1)
        await fresh.stop()
        await replica.stop()
        await uploader.stop()
    }

    /// Another replica's delete drops the local original only once the bucket says nothing uses
    /// its content any more — a name may still —, whatever records this replica holds in memory.
    @Test func aDeleteSeenFromAnotherReplicaKeepsAnOriginalANameStillUses() async throws {
        let clock = ManualClock()
        let uploader = try TestService(backend: .s3) { $0.auth.adminToken = "t" }
        let admin = ["Authorization": "Bearer t"]
        let gif = try Corpus.bytes("pillow/gif/iss634.gif")
        let id = Self.sha(gif)
        #expect(try uploader.upload(gif).status == 201)
        #expect(try uploader.client.send("PUT", "/images/alias.gif", body: gif).status == 201)
        let replica = try TestService(backend: .s3, bucket: uploader.bucket, clock: clock)
        #expect(try replica.client.get("/frames/\(id)/0").status == 200)
        let local = replica.dataDirectory + "/originals/" + id
        #expect(FileManager.default.fileExists(atPath: local))

        /// Waits until the replica has asked the bucket whether the content is still used.
        func waitForTheCheck(after lists: Double) throws {
            let deadline = Date().addingTimeInterval(10)
            while try replica.metric("flipbook_s3_requests_total", where: "ListObjectsV2") <= lists {
                try #require(Date() < deadline, "the replica never asked the bucket")
                usleep(10_000)
            }
        }

        // The content id goes; the replica holds no record of the name, which still uses it.
        #expect(try uploader.client.send("DELETE", "/images/\(id)", headers: admin).status == 204)
        clock.advance(by: replica.server.store.recheckSeconds)
        var lists = try replica.metric("flipbook_s3_requests_total", where: "ListObjectsV2")
        #expect(try replica.client.get("/images/\(id)").status == 404)
        try waitForTheCheck(after: lists)
        #expect(FileManager.default.fileExists(atPath: local), "the name still uses the original")
        #expect(try replica.client.get("/frames/alias.gif/0").status == 200)

        // The name goes too: nothing uses the content, and the local copy goes.
        #expect(try uploader.client.send("DELETE", "/images/alias.gif", headers: admin).status == 204)
        clock.advance(by: replica.server.store.recheckSeconds)
        lists = try replica.metric("flipbook_s3_requests_total", where: "ListObjectsV2")
        #expect(try replica.client.get("/images/alias.gif").status == 404)
        try waitForTheCheck(after: lists)
        let deadline = Date().addingTimeInterval(10)
        while FileManager.default.fileExists(atPath: local) && Date() < deadline { usleep(10_000) }
        #expect(!FileManager.default.fileExists(atPath: local))
        await replica.stop()
        await uploader.stop()
    }

    /// Foundation downloads into a file of its own in the system's temporary directory; an
    /// answer other than 200 (a missing derived product, an error) must not leave it there.
    @Test func aDownloadThatFindsNothingLeavesNoFileBehind() async throws {
        let service = try TestService(backend: .s3)
        let client = try #require(service.server.store.backend as? S3Backend).client
        let marker = UUID().uuidString
        let destination = service.dataDirectory + "/tmp/download-" + marker
        for _ in 0..<3 {
            let response = try client.download("GetObject", key: "flipbook/missing-" + marker, to: destination)
            #expect(response.status == 404)
        }
        #expect(!FileManager.default.fileExists(atPath: destination))
        let temporary = NSTemporaryDirectory()
        // The error answer names the key, so a file left behind holds the marker; only small
        // regular files are read (the temporary directory may hold anything).
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary).filter { name in
            var status = stat()
            guard lstat(temporary + name, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size < 65536,
                let text = try? String(contentsOfFile: temporary + name, encoding: .utf8)
            else { return false }
            return text.contains(marker)
        }
        #expect(left.isEmpty, "left in \(temporary): \(left)")

        let gif = try Corpus.bytes("wuffs/muybridge.gif")
        #expect(try service.upload(gif).status == 201)
        let found = try client.download("GetObject", key: "flipbook/originals/" + Self.sha(gif), to: destination)
        #expect(found.status == 200)
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == Data(gif))
        await service.stop()
    }

    /// A download whose file cannot be made (a full or read-only disk) fails that download as a
    /// local failure: S3 still counts as reachable, the next download works, the process lives.
    @Test func aDestinationThatCannotBeWrittenFailsOnlyThatDownload() async throws {
        let service = try TestService(backend: .s3)
        let client = try #require(service.server.store.backend as? S3Backend).client
        let gif = try Corpus.bytes("wuffs/muybridge.gif")
        #expect(try service.upload(gif).status == 201)
        let key = "flipbook/originals/" + Self.sha(gif)
        let unwritable = "/nonexistent-\(UUID().uuidString)/original"
        #expect {
            try client.download("GetObject", key: key, to: unwritable)
        } throws: { error in
            guard case .failed(let why) = error as? StorageFailure else { return false }
            return why.contains("cannot write it to \(unwritable)")
        }
        #expect(client.isReachable)
        let destination = service.dataDirectory + "/tmp/original-" + UUID().uuidString
        #expect(try client.download("GetObject", key: key, to: destination).status == 200)
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == Data(gif))
        await service.stop()
    }

    @Test func anS3OutageKeepsLocalImagesServingAndUploadsAnswer503() async throws {
        let moto = try MotoServer.start()
        let bucket = try moto.makeBucket()
        let clock = ManualClock()
        let service = try TestService(backend: .s3, bucket: bucket, moto: moto, clock: clock) {
            $0.storage.s3.retries = 1
            $0.storage.s3.requestTimeoutSeconds = 3
        }
        let gif = try Corpus.bytes("wuffs/muybridge.gif")
        let id = try #require(try service.upload(gif).json["id"] as? String)
        let frame = try service.client.get("/frames/\(id)/3").body
        #expect(try service.client.get("/readyz").json["status"] as? String == "ready")

        moto.stop()
        clock.advance(by: 10)  // every record is due for a recheck, which cannot happen
        #expect(try service.client.get("/frames/\(id)/3").body == frame)
        #expect(try service.client.get("/frames/\(id)/9").status == 200)
        #expect(try service.client.get("/images/\(id)").status == 200)
        let upload = try service.upload(try Corpus.bytes("pillow/gif/iss634.gif"))
        #expect(upload.status == 503)
        #expect(upload.header("Retry-After") == "2")
        #expect(upload.header("Content-Type") == "application/problem+json")
        let unknown = try service.client.get("/images/\(String(repeating: "ab", count: 32))")
        #expect(unknown.status == 503, "storage cannot say whether it exists")
        let ready = try service.client.get("/readyz")
        #expect(ready.status == 200)
        #expect(ready.json["status"] as? String == "degraded")
        #expect((ready.json["detail"] as? String)?.contains("S3 cannot be reached") == true)

        // S3 back (moto restarts empty: the bucket is made again): the probe notices, uploads work.
        let again = try MotoServer.start(port: moto.port)
        _ = try again.makeBucket(bucket)
        var status = ""
        for _ in 0..<100 where status != "ready" {
            status = (try service.client.get("/readyz").json["status"] as? String) ?? ""
            if status != "ready" { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(status == "ready")
        #expect(try service.upload(try Corpus.bytes("pillow/gif/iss634.gif")).status == 201)
        await service.stop()
        again.stop()
    }

    @Test func credentialsComeFromTheAWSVariablesAndAreNeverLogged() async throws {
        let environment = [
            "AWS_ACCESS_KEY_ID": "AKIAFLIPBOOKTEST", "AWS_SECRET_ACCESS_KEY": "very-secret-key-value",
            "AWS_SESSION_TOKEN": "very-secret-session-token", "FLIPBOOK_STORAGE_BACKEND": "s3",
            "FLIPBOOK_STORAGE_S3_BUCKET": "b", "FLIPBOOK_STORAGE_S3_ENDPOINT": "http://127.0.0.1:9",
        ]
        let settings = try await SettingsLoader(configPath: SettingsTests.configFile, environment: environment).load().settings
        #expect(settings.storage.s3.accessKeyId == "AKIAFLIPBOOKTEST")
        #expect(settings.storage.s3.secretAccessKey == "very-secret-key-value")
        #expect(settings.storage.s3.sessionToken == "very-secret-session-token")
        // The settings' own keys win over the AWS variables.
        let own = try await SettingsLoader(
            configPath: SettingsTests.configFile, environment: environment,
            overrides: [
                "storage.s3.accessKeyId": "own", "storage.s3.secretAccessKey": "own-secret",
            ]
        ).load().settings
        #expect(own.storage.s3.accessKeyId == "own" && own.storage.s3.secretAccessKey == "own-secret")

        let lines = LogLines()
        var logger = Logger(label: "test") { _ in CapturingLogHandler(lines: lines) }
        logger.logLevel = .trace
        var serving = settings
        serving.server.port = 0
        serving.server.host = "127.0.0.1"
        serving.storage.dataDir = TestService.temporaryDirectory()
        serving.storage.libraryDirs = []
        serving.storage.s3.retries = 0
        serving.cache.maxBytes = 1 << 20
        let server = try FlipbookServer(settings: serving, logger: logger)
        try server.start()
        let client = HTTPTestClient(port: server.port)
        _ = try client.send("POST", "/images", body: try Corpus.bytes("wuffs/muybridge.gif"))  // S3 unreachable: logged
        await server.stop()
        let text = lines.all.joined(separator: "\n")
        #expect(text.contains("AKIAFLIPBOOKTEST"), "the key id is logged at start-up")
        #expect(!text.contains("very-secret"), "\(text)")
    }

    @Test func invalidS3SettingsStopStartUp() async throws {
        let base = ["FLIPBOOK_STORAGE_BACKEND": "s3", "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"]
        let cases: [([String: String], String)] = [
            ([:], "storage.s3.bucket"),
            (["FLIPBOOK_STORAGE_S3_BUCKET": "b", "FLIPBOOK_STORAGE_S3_ENDPOINT": "minio:9000"], "storage.s3.endpoint"),
            (["FLIPBOOK_STORAGE_S3_BUCKET": "b", "FLIPBOOK_STORAGE_S3_PARTBYTES": "1000"], "storage.s3.partBytes"),
            (["FLIPBOOK_STORAGE_S3_BUCKET": "b", "FLIPBOOK_STORAGE_S3_PREFIX": "a b"], "storage.s3.prefix"),
            (["FLIPBOOK_STORAGE_BACKEND": "nfs"], "storage.backend"),
        ]
        for (extra, key) in cases {
            await #expect(
                performing: {
                    try await SettingsLoader(
                        configPath: SettingsTests.configFile,
                        environment: base.merging(extra) { $1 }
                    ).load()
                }, throws: { "\($0)".contains(key) })
        }
        await #expect(
            performing: {
                try await SettingsLoader(
                    configPath: SettingsTests.configFile,
                    environment: ["FLIPBOOK_STORAGE_BACKEND": "s3", "FLIPBOOK_STORAGE_S3_BUCKET": "b"]
                ).load()
            }, throws: { "\($0)".contains("AWS_ACCESS_KEY_ID") })
    }
}

/// Log lines kept in memory.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// A log handler that keeps every message with its metadata, for checking what is logged.
struct CapturingLogHandler: LogHandler {
    let lines: LogLines
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        lines.append("\(event.level) \(event.message) \(all.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))")
    }
}
