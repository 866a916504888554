import FlipbookService
import FlipbookTestSupport
import Foundation
import Glibc
import ImageStorage
import ServiceTestSupport
import Synchronization
import Testing

/// `flipbook serve` as a process: SIGKILL in the middle of uploads loses no acknowledged upload,
/// and SIGUSR1 raises memory pressure. Waits are bounded only to fail instead of hang.
@Suite("Serve process", .serialized, .ownThreads)
struct ServeProcessTests {
    @Test func everyAcknowledgedUploadSurvivesSIGKILL() async throws {
        let data = NSTemporaryDirectory() + "flipbook-kill-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: data) }
        let inputs = Corpus.entries.filter { !$0.negative && $0.format == "gif" }.prefix(40).map(\.path)
        #expect(inputs.count == 40)
        let acknowledged = Acknowledged()
        do {
            let server = try ServeProcess(dataDirectory: data)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask { [client = server.client, acknowledged] in
                        for path in inputs.enumerated().filter({ $0.offset % 4 == worker }).map(\.element) {
                            guard let bytes = try? Corpus.bytes(path),
                                let response = try? client.send("POST", "/images", body: bytes),
                                response.status == 201 || response.status == 200,
                                let id = response.json["id"] as? String
                            else { continue }
                            acknowledged.ids.withLock { $0.append(id) }
                        }
                    }
                }
                // Killed once some uploads were acknowledged, while others are on their way.
                let deadline = Date().addingTimeInterval(60)
                while acknowledged.ids.withLock({ $0.count }) < 8, Date() < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                }
                server.kill()
                try await group.waitForAll()
            }
        }
        let ids = acknowledged.ids.withLock { $0 }
        #expect(ids.count >= 8)
        let restarted = try ServeProcess(dataDirectory: data)
        for id in ids {
            let metadata = try restarted.client.get("/images/\(id)")
            #expect(metadata.status == 200, "\(id)")
            #expect(try restarted.client.get("/frames/\(id)/0").status == 200, "\(id)")
        }
    }

    @Test func uploadSessionsCutBySIGKILLLeaveNothing() async throws {
        let data = NSTemporaryDirectory() + "flipbook-kill-sessions-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: data) }
        let inputs = try ["wuffs/muybridge.gif", "wuffs/muybridge.apng", "image-rs-image-webp/images/animated/random_lossy.webp"]
            .map { try Corpus.bytes($0) }
        let files = { (directory: String) in (try? FileManager.default.contentsOfDirectory(atPath: data + "/" + directory)) ?? []
        }
        var sessions: [String] = []
        do {
            let server = try ServeProcess(dataDirectory: data)
            var uploaders: [RawHTTPClient] = []
            for bytes in inputs + inputs {
                let created = try server.client.send("POST", "/uploads")
                let id = try #require(created.json["uploadId"] as? String)
                let uploader = try RawHTTPClient(port: server.port, timeoutSeconds: 30)
                try uploader.send("PUT /uploads/\(id) HTTP/1.1\r\nHost: x\r\nContent-Length: \(bytes.count)\r\n\r\n")
                try uploader.send(Array(bytes[0..<(bytes.count / 2)]))
                sessions.append(id)
                uploaders.append(uploader)
            }
            // Every body is half in (its temporary file written) when the server dies.
            let deadline = Date().addingTimeInterval(30)
            for (id, bytes) in zip(sessions, inputs + inputs) {
                while (try? server.client.get("/uploads/\(id)").json["bytesReceived"] as? Int) != bytes.count / 2 {
                    guard Date() < deadline else { throw TestFailure("upload \(id) did not get its first half") }
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            #expect(files("tmp").count >= sessions.count, "\(files("tmp"))")
            server.kill()
            server.process.waitUntilExit()
            #expect(server.process.terminationReason == .uncaughtSignal)
        }
        let restarted = try ServeProcess(dataDirectory: data)
        // Reconciliation removes them in the background after start-up (the store serves
        // meanwhile): at load 15 it had not yet when the server first answered.
        let cleanup = Date().addingTimeInterval(60)
        while !files("tmp").isEmpty && Date() < cleanup { try await Task.sleep(for: .milliseconds(50)) }
        #expect(files("tmp").isEmpty, "the restart removes the cut uploads' temporary files: \(files("tmp"))")
        #expect(files("objects").isEmpty && files("meta").isEmpty, "no original, no record")
        for id in sessions { #expect(try restarted.client.get("/uploads/\(id)").status == 404) }
        for bytes in inputs {
            #expect(try restarted.client.get("/images/\(ContentHash.sha256Hex(bytes))").status == 404)
        }
        let listing = try restarted.client.get("/images")
        let listed = try #require(listing.json["images"] as? [[String: Any]])
        #expect(listed.allSatisfy { $0["source"] as? String == "library" }, "only the samples: \(listing.text)")
        // And it serves: an upload session completes, its frames are served.
        let created = try restarted.client.send("POST", "/uploads")
        let id = try #require(created.json["uploadId"] as? String)
        let stored = try restarted.client.send("PUT", "/uploads/\(id)", body: inputs[0])
        #expect(stored.status == 201)
        let imageID = try #require(stored.json["id"] as? String)
        #expect(try restarted.client.get("/frames/\(imageID)/3").status == 200)
    }

    /// The ids the server answered 201/200 for, from every uploading task.
    final class Acknowledged: Sendable {
        let ids = Mutex<[String]>([])
    }

    /// Uploads a GIF through `service`; its id.
    static func uploadGIF(to service: TestService) throws -> String {
        try #require(try service.upload(try Corpus.bytes("wuffs/muybridge.gif")).json["id"] as? String)
    }

    /// A `flipbook serve` on `storage.backend = s3` over `uploader`'s bucket, with a data
    /// directory of its own (nothing local: every original comes from the bucket).
    static func coldReplica(
        of uploader: TestService, dataDirectory: String, environment: [String: String] = [:]
    ) throws -> ServeProcess {
        let moto = try #require(uploader.moto)
        return try ServeProcess(
            dataDirectory: dataDirectory,
            settings: [
                "storage.backend=s3", "storage.s3.endpoint=\(moto.endpoint)", "storage.s3.bucket=\(uploader.bucket!)",
                "storage.s3.prefix=flipbook/", "storage.s3.pathStyle=true", "storage.s3.accessKeyId=test-key",
                "storage.s3.secretAccessKey=test-secret",
            ],
            environment: environment)
    }

    /// With `storage.backend = s3`, `flipbook serve` downloads into its data directory, not the
    /// system's temporary directory: a replica whose root file system is read-only (here: a
    /// TMPDIR that does not exist, which used to stop the process at its first cold original)
    /// still brings originals from the bucket and serves them.
    @Test func onS3AColdReplicaNeedsNoSystemTemporaryDirectory() async throws {
        let uploader = try TestService(backend: .s3)
        let id = try Self.uploadGIF(to: uploader)
        let data = ScratchDirectory.make("serve-s3")
        let server = try Self.coldReplica(
            of: uploader, dataDirectory: data, environment: ["TMPDIR": "/nonexistent-\(UUID().uuidString)"])
        let frame = try server.client.get("/frames/\(id)/3")
        #expect(frame.status == 200)
        #expect(frame.body == (try uploader.client.get("/frames/\(id)/3").body))
        #expect(FileManager.default.fileExists(atPath: data + "/originals/" + id))
        #expect(try FileManager.default.contentsOfDirectory(atPath: data + "/tmp").filter { !$0.hasPrefix(".") }.isEmpty)
        await uploader.stop()
    }

    /// When no file can be made where Foundation receives downloads (here the data directory's
    /// `tmp` becomes a plain file while serving, as good as a volume remounted read-only), a cold
    /// original is a 5xx problem for that request, and the process lives on (Foundation would
    /// have stopped it).
    @Test func onS3AnUnwritableDownloadDirectoryFailsTheRequestNotTheProcess() async throws {
        let uploader = try TestService(backend: .s3)
        let id = try Self.uploadGIF(to: uploader)
        let data = ScratchDirectory.make("serve-s3-unwritable")
        let server = try Self.coldReplica(of: uploader, dataDirectory: data)
        // After start-up (which would refuse a data directory it cannot use): `tmp` goes and a
        // plain file takes its place.
        try FileManager.default.removeItem(atPath: data + "/tmp")
        #expect(FileManager.default.createFile(atPath: data + "/tmp", contents: Data("not a directory".utf8)))
        let frame = try server.client.get("/frames/\(id)/3")
        #expect((500..<600).contains(frame.status), "\(frame.status)")
        #expect(frame.header("Content-Type") == "application/problem+json")
        #expect(server.process.isRunning)
        #expect(try server.client.get("/healthz").status == 200)
        await uploader.stop()
    }

    @Test func sigusr1RaisesMemoryPressure() throws {
        let data = NSTemporaryDirectory() + "flipbook-usr1-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: data) }
        let server = try ServeProcess(dataDirectory: data)
        #expect(!(try server.client.get("/stats").text.contains("\"signal\"")))
        server.kill(SIGUSR1)
        let deadline = Date().addingTimeInterval(30)
        var seen = false
        while !seen, Date() < deadline {
            seen = (try? server.client.get("/stats").text.contains("\"signal\"")) == true  // the purge's source
            if !seen { usleep(20_000) }
        }
        #expect(seen, "/stats never showed the SIGUSR1 purge")
        #expect(server.process.isRunning)
    }
}
