import AnimatedImage
import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Synchronization
import Testing

@testable import FlipbookService
@testable import ImageStorage

/// The service over loopback, as a client sees it: the API contract, on both storage backends
/// (`fs`: a data directory; `s3`: a bucket of moto's S3 server, see ``MotoServer``).
@Suite("End to end", .serialized, .ownThreads)
struct EndToEndTests {
    /// Every corpus file goes up over HTTP; its metadata says what Chromium's reference says of the
    /// file (canvas, frames, raw delays, repetition count) and what follows from those by the
    /// browsers' rules (played delays, timestamps, duration, their GCD); every frame comes back
    /// exactly as the decoding core (what `flipbook frames` writes) makes it; files the core
    /// rejects are refused with 415 or 422 and a problem document.
    @Test(arguments: Backend.allCases) func everyCorpusFileRoundTripsThroughTheAPI(_ backend: Backend) async throws {
        #expect(
            Corpus.manifests.contains("manifest.json") && Corpus.manifests.contains("flipbook-cases/manifest.json"),
            "corpus missing at \(Corpus.root.path)")
        #expect(Corpus.entries.count > 200 + 21, "corpus missing at \(Corpus.root.path)")
        let service = try TestService(backend: backend)
        var totalAccepted = 0
        for manifest in Corpus.manifests {
            var accepted = 0
            var refused = 0
            var frames = 0
            for entry in Corpus.entries where entry.manifest == manifest {
                let bytes = try Corpus.bytes(entry.path)
                let response = try service.upload(bytes)
                let local: AnimatedImage
                do {
                    local = try AnimatedImage(bytes: bytes, verification: .full)
                } catch {
                    let expected = (error as? AnimatedImageError) == .unsupportedFormat ? 415 : 422
                    #expect(response.status == expected, "\(entry.path): \(response.status) \(response.text)")
                    #expect(response.header("Content-Type") == "application/problem+json", "\(entry.path)")
                    #expect((response.json["detail"] as? String)?.isEmpty == false, "\(entry.path)")
                    refused += 1
                    continue
                }
                #expect(response.status == 201 || response.status == 200, "\(entry.path): \(response.status) \(response.text)")
                let id = try #require(response.json["id"] as? String, "\(entry.path)")
                #expect(id == ContentHash.sha256Hex(bytes))
                #expect(response.header("Location") == "/images/\(id)")
                let metadata = try service.client.get("/images/\(id)")
                #expect(metadata.status == 200, "\(entry.path)")
                try Self.expectMetadata(metadata.json, of: entry, bytes: bytes, id: id)
                let renderer = FrameRenderer(image: local)
                for k in 0..<local.frameCount {
                    let frame = try service.client.get("/frames/\(id)/\(k)")
                    #expect(frame.status == 200, "\(entry.path) frame \(k): \(frame.text)")
                    #expect(frame.header("Content-Type") == "image/png")
                    #expect(
                        frame.body == (try PNGEncoder().encode(renderer.render(k), colorSpace: local.colorSpace)),
                        "\(entry.path) frame \(k)")
                    frames += 1
                }
                let beyond = try service.client.get("/frames/\(id)/\(local.frameCount)")
                #expect(beyond.status == 404)
                accepted += 1
            }
            print("end to end, \(manifest): \(accepted) corpus files served (\(frames) frames identical), \(refused) refused")
            #expect(accepted > 0, "\(manifest)")
            totalAccepted += accepted
        }
        #expect(totalAccepted > 150)
        await service.stop()
    }

    /// Checks a metadata document against Chromium's reference for `entry` (its meta.json) and the
    /// file's own facts (size, format family); delays, timestamps and the GCD are derived here from
    /// Chromium's durations by the rule browsers play them by (10 ms or less plays as 100 ms).
    static func expectMetadata(_ json: [String: Any], of entry: Corpus.Entry, bytes: [UInt8], id: String) throws {
        let path = entry.path
        let reference = try #require(try Corpus.reference(path), "\(path): Chromium refuses a file Flipbook serves")
        let frameCount = reference.frames.count
        #expect(json["id"] as? String == id, "\(path)")
        let format = try #require(json["format"] as? String, "\(path)")
        // The manifests call every PNG "png" (Flipbook tells an APNG apart), and "apng" some.
        let family = ["gif": "gif", "webp": "webp", "png": "png", "apng": "png"]
        #expect(family[format] != nil && family[format] == family[entry.format], "\(path): \(format), manifest \(entry.format)")
        #expect(json["mimeType"] as? String == "image/" + format, "\(path)")
        let canvas = try #require(reference.frames.first, "\(path): Chromium shows no complete frame")
        #expect(json["width"] as? Int == canvas.width && json["height"] as? Int == canvas.height, "\(path)")
        #expect(json["frameCount"] as? Int == frameCount, "\(path)")
        #expect(json["animated"] as? Bool == (frameCount > 1), "\(path)")
        #expect(json["fileBytes"] as? Int == bytes.count, "\(path)")
        #expect(json["truncated"] is Bool, "\(path)")
        let frames = try #require(json["frames"] as? [[String: Any]], "\(path)")
        #expect(frames.count == frameCount, "\(path)")
        let raw = frames.map { $0["rawDelayMs"] as? Int ?? -1 }
        for (i, frame) in reference.frames.enumerated() where i < frames.count {
            if let duration = frame.durationUs {
                #expect(raw[i] * 1000 == duration, "\(path) frame \(i): raw delay \(raw[i]) ms, Chromium \(duration) µs")
            }
        }
        let played = raw.map { $0 <= 10 ? 100 : $0 }
        var start = 0
        var gcd = 0
        for (i, frame) in frames.enumerated() {
            #expect(frame["index"] as? Int == i, "\(path) frame \(i)")
            #expect(frame["delayMs"] as? Int == played[i], "\(path) frame \(i)")
            #expect(frame["timestampMs"] as? Int == start, "\(path) frame \(i)")
            start += played[i]
            var (a, b) = (gcd, played[i])
            while b != 0 { (a, b) = (b, a % b) }
            gcd = a
        }
        #expect(frames.first?["independent"] as? Bool == true, "\(path): the first frame needs nothing beneath it")
        #expect(json["durationMs"] as? Int == start, "\(path)")
        #expect(json["delayGcdMs"] as? Int == gcd, "\(path)")
        let playCount = try #require(json["playCount"] as? Int, "\(path)")
        let repetition = json["repetitionCount"].map { "\($0)" }
        #expect(repetition == (playCount == 0 ? "infinite" : String(playCount - 1)), "\(path): \(playCount) plays")
        if frameCount > 1 {  // (Chromium's count for a still says nothing)
            let chromium = reference.repetitionCount == "Infinity" ? "infinite" : reference.repetitionCount
            #expect(repetition == chromium, "\(path): repetitionCount \(repetition ?? "-"), Chromium \(chromium)")
        }
    }

    /// `flipbook frames` and the API give the same bytes for every frame: for every input of the
    /// flipbook-cases manifest (16-bit, interlaced, colour-tagged, cut WebP) and one file of each
    /// format from the top manifest. Inputs the core rejects are refused by both.
    @Test(arguments: Backend.allCases) func theCLIWritesTheSameFramesTheServiceServes(_ backend: Backend) async throws {
        let cli = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/flipbook").path
        try #require(FileManager.default.isExecutableFile(atPath: cli), "build the flipbook CLI first: \(cli)")
        let cases = Corpus.entries.filter { $0.manifest == "flipbook-cases/manifest.json" }.map(\.path)
        #expect(cases.count >= 21, "flipbook-cases missing at \(Corpus.root.path)")
        let service = try TestService(backend: backend)
        var compared = 0
        var refused = 0
        for path in ["pillow/gif/iss634.gif", "image-rs-image/images/png/apng/ball.png", "pillow/webp/iss634.webp"] + cases {
            let upload = try service.upload(Corpus.bytes(path))
            let output = TestService.temporaryDirectory()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: cli)
            process.arguments = ["frames", Corpus.root.appendingPathComponent(path).path, "--output", output]
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard let id = upload.json["id"] as? String else {
                #expect([415, 422].contains(upload.status), "\(path): \(upload.status) \(upload.text)")
                #expect(process.terminationStatus == 1, "\(path): the API refuses it, the CLI exits \(process.terminationStatus)")
                refused += 1
                continue
            }
            #expect(process.terminationStatus == 0, "\(path)")
            let files = try FileManager.default.contentsOfDirectory(atPath: output).sorted()
            #expect(files.count == upload.json["frameCount"] as? Int, "\(path): \(files.count) files")
            for (k, file) in files.enumerated() {
                let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output + "/" + file)))
                #expect(try service.client.get("/frames/\(id)/\(k)").body == written, "\(path) frame \(k)")
                compared += 1
            }
        }
        print("CLI and API (\(backend)): \(compared) frames byte-identical, \(refused) inputs refused by both")
        #expect(compared > 21)
        await service.stop()
    }

    /// Chromium shows nothing of a WebP cut short, so neither does Flipbook: 422 over HTTP,
    /// exit status 1 from the CLI. A GIF or APNG cut after whole frames still serves them.
    @Test(arguments: Backend.allCases) func aWebPCutShortIsRefusedByTheAPIAndTheCLI(_ backend: Backend) async throws {
        let cli = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/flipbook").path
        try #require(FileManager.default.isExecutableFile(atPath: cli), "build the flipbook CLI first: \(cli)")
        let service = try TestService(backend: backend)
        let directory = TestService.temporaryDirectory()
        for (path, cutStatus) in [
            ("pillow/webp/iss634.webp", 422), ("pillow/gif/iss634.gif", 201),
            ("image-rs-image/images/png/apng/ball.png", 201),
        ] {
            let bytes = try Corpus.bytes(path)
            let cut = Array(bytes.prefix(bytes.count * 7 / 10))
            let response = try service.upload(cut)
            #expect(response.status == cutStatus, "\(path): \(response.text)")
            let file = directory + "/cut-" + (path as NSString).lastPathComponent
            try Data(cut).write(to: URL(fileURLWithPath: file))
            for arguments in [["info", file], ["frames", file, "--output", directory + "/frames"]] {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: cli)
                process.arguments = arguments
                process.standardError = FileHandle.nullDevice
                process.standardOutput = FileHandle.nullDevice
                try process.run()
                process.waitUntilExit()
                #expect(process.terminationStatus == (cutStatus == 422 ? 1 : 0), "flipbook \(arguments.joined(separator: " "))")
            }
            if cutStatus == 201 {
                #expect(response.json["truncated"] as? Bool == true, "\(path)")
                #expect((response.json["frameCount"] as? Int ?? 0) > 0, "\(path)")
            } else {
                #expect(response.header("Content-Type") == "application/problem+json")
            }
        }
        await service.stop()
    }

    @Test(arguments: Backend.allCases) func conditionalRequestsAnswer304(_ backend: Backend) async throws {
        let service = try TestService(backend: backend)
        let id = try #require(try service.upload(Corpus.bytes("wuffs/muybridge.gif")).json["id"] as? String)
        let metadata = try service.client.get("/images/\(id)")
        let etag = try #require(metadata.header("ETag"))
        #expect(metadata.header("Cache-Control") == "no-cache")
        let again = try service.client.get("/images/\(id)", headers: ["If-None-Match": etag])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.header("ETag") == etag)
        #expect(try service.client.get("/images/\(id)", headers: ["If-None-Match": "\"other\""]).status == 200)

        let frame = try service.client.get("/frames/\(id)/3")
        #expect(frame.header("Cache-Control") == "public, max-age=31536000, immutable")
        let frameTag = try #require(frame.header("ETag"))
        #expect(frameTag != etag)
        #expect(try service.client.get("/frames/\(id)/3", headers: ["If-None-Match": frameTag]).status == 304)
        #expect(try service.client.get("/frames/\(id)/4", headers: ["If-None-Match": frameTag]).status == 200)
        let delays = try service.client.get("/images/\(id)/delays")
        let delaysTag = try #require(delays.header("ETag"))
        #expect(try service.client.get("/images/\(id)/delays", headers: ["If-None-Match": delaysTag]).status == 304)
        await service.stop()
    }

    /// pillow/gif/iss634.gif as Chromium reads it (chromium/pillow/gif/iss634.gif/meta.json):
    /// 42 frames, looping forever, with these delays; the first one (0 ms) plays as 100 ms.
    static let iss634RawDelaysMs = [
        0, 70, 60, 70, 70, 60, 70, 70, 60, 70, 70, 60, 70, 70, 60, 70, 70, 60, 70, 60, 70,
        70, 60, 70, 70, 60, 70, 70, 60, 70, 70, 60, 70, 70, 60, 70, 70, 60, 70, 70, 60, 70,
    ]
    static let iss634TimestampsMs = [
        0, 100, 170, 230, 300, 370, 430, 500, 570, 630, 700, 770, 830, 900, 970, 1030,
        1100, 1170, 1230, 1300, 1360, 1430, 1500, 1560, 1630, 1700, 1760, 1830, 1900,
        1960, 2030, 2100, 2160, 2230, 2300, 2360, 2430, 2500, 2560, 2630, 2700, 2760,
    ]

    @Test(arguments: Backend.allCases) func framesAtATimeFollowTheTimeline(_ backend: Backend) async throws {
        let service = try TestService(backend: backend)
        let bytes = try Corpus.bytes("pillow/gif/iss634.gif")
        let id = try #require(try service.upload(bytes).json["id"] as? String)
        let duration = 2830
        let stamps = Self.iss634TimestampsMs
        // One play lasts 2830 ms; t = 1000 falls in frame 14 ([970, 1030)), as does 1 000 000 (1010 ms into a play).
        for (t, expected) in [
            (0, 0), (99, 0), (100, 1), (169, 1), (170, 2), (1_000, 14), (duration + 5, 0),
            (1_000_000, 14),
        ] {
            let response = try service.client.get("/frames/\(id)?t=\(t)")
            #expect(response.status == 200)
            #expect(response.header("X-Frame-Index") == String(expected), "t=\(t)")
            #expect(response.header("Content-Location") == "/frames/\(id)/\(expected)")
            #expect(response.body == (try service.client.get("/frames/\(id)/\(expected)").body))
        }
        // Fractional times, as JavaScript players compute them: the frame whose interval
        // [timestamp, timestamp + delay) holds t; any length of digits, exactly. 10^29 ms is
        // 1380 ms into a play (10^29 mod 2830): frame 20, [1360, 1430).
        let huge = 20
        let fractional: [(String, Int)] = [
            ("0.0", 0), ("0.5", 0), ("\(stamps[1] - 1).999999", 0), ("\(stamps[1]).0", 1), ("\(stamps[1]).5", 1),
            ("\(stamps[2]).25", 2), ("00\(stamps[2])", 2), ("\(duration).5", 0),
            ("1" + String(repeating: "0", count: 29), huge), ("1" + String(repeating: "0", count: 29) + ".75", huge),
        ]
        for (t, expected) in fractional {
            let response = try service.client.get("/frames/\(id)?t=\(t)")
            #expect(response.status == 200, "t=\(t): \(response.text)")
            #expect(response.header("X-Frame-Index") == String(expected), "t=\(t)")
            #expect(response.header("Content-Location") == "/frames/\(id)/\(expected)")
        }
        // (The query is form-decoded: '+' is a space, %2B a plus sign.)
        let shownAs = ["+5": " 5", "%2B5": "+5", "5%20": "5 "]
        for t in ["-1", "-0.5", "1e3", "+5", "%2B5", ".5", "5.", "1.2.3", "0x10", "NaN", "inf", "", "1,5", "5%20"] {
            let response = try service.client.get("/frames/\(id)?t=\(t)")
            #expect(response.status == 400, "t=\(t)")
            let shown = shownAs[t] ?? t
            #expect(response.json["detail"] as? String == "t='\(shown)' is not a non-negative number of milliseconds.", "t=\(t)")
        }
        let delays = try service.client.get("/images/\(id)/delays").json
        #expect(delays["id"] as? String == id)
        #expect(delays["frameCount"] as? Int == 42)
        #expect((delays["delaysMs"] as? [Int]) == [100] + Self.iss634RawDelaysMs.dropFirst())
        #expect((delays["rawDelaysMs"] as? [Int]) == Self.iss634RawDelaysMs)
        #expect((delays["timestampsMs"] as? [Int]) == stamps)
        #expect((delays["durationMs"] as? Int) == duration)
        #expect((delays["playCount"] as? Int) == 0)
        #expect((delays["repetitionCount"] as? String) == "infinite")
        #expect((delays["delayGcdMs"] as? Int) == 10)  // of 100, 70 and 60
        await service.stop()
    }

    @Test(arguments: Backend.allCases) func errorsAreProblemDocumentsWithTheRightStatus(_ backend: Backend) async throws {
        let service = try TestService(backend: backend) { settings in
            settings.server.maxUploadBytes = 200_000
            settings.limits.decode.maxFrames = 20
        }
        let c = service.client
        let id = try #require(try service.upload(Corpus.bytes("wuffs/muybridge.gif")).json["id"] as? String)
        func expectProblem(_ response: HTTPTestResponse, _ status: Int, _ what: String) {
            #expect(response.status == status, "\(what): \(response.status) \(response.text)")
            #expect(response.header("Content-Type") == "application/problem+json", "\(what)")
            let json = response.json
            #expect(json["status"] as? Int == status, "\(what)")
            #expect(json["title"] is String && json["type"] is String && json["detail"] is String, "\(what)")
        }
        expectProblem(try c.get("/frames/\(id)/x"), 400, "bad index")
        expectProblem(try c.get("/frames/\(id)/-1"), 400, "negative index")
        expectProblem(try c.get("/frames/\(id)?t=soon"), 400, "bad t")
        expectProblem(try c.get("/frames/\(id)"), 400, "neither index nor t")
        expectProblem(try c.get("/frames/\(id)/15"), 404, "index out of range")
        expectProblem(try c.get("/frames/\(String(repeating: "a", count: 64))/0"), 404, "unknown id")
        expectProblem(try c.get("/images/nope"), 404, "unknown image")
        expectProblem(try c.get("/no/such/path"), 404, "unknown path")
        let wrongMethod = try c.send("PATCH", "/images/\(id)")
        expectProblem(wrongMethod, 405, "method")
        #expect(wrongMethod.header("Allow")?.contains("GET") == true)
        expectProblem(try service.upload(Array("hello, not an image".utf8)), 415, "not an image")
        let overLimit = try service.upload(Array(try Corpus.bytes("pillow/apng/blend_op_over_near_transparent.png")))
        expectProblem(overLimit, 422, "128 frames > 20")
        #expect(
            (overLimit.json["detail"] as? String)?.contains("maxFrames is 20, the image needs at least ") == true,
            "\(overLimit.text)")
        let truncated = Array(try Corpus.bytes("wuffs/muybridge.gif").prefix(40))
        expectProblem(try service.upload(truncated), 422, "no complete frame")
        expectProblem(try service.upload([UInt8](repeating: 0x47, count: 300_000)), 413, "too large")
        expectProblem(try service.upload([]), 400, "empty body")
        expectProblem(try c.send("PUT", "/images/..", body: try Corpus.bytes("wuffs/muybridge.gif")), 400, "bad name")
        expectProblem(try c.send("DELETE", "/images/\(id)"), 403, "admin disabled")
        expectProblem(try c.send("POST", "/admin/memory-pressure?level=warning"), 403, "admin disabled")
        // Nothing a client sends gets a 5xx.
        #expect(try c.get("/frames/\(id)/99999999999999999999999").status == 400)
        #expect(try c.get("/frames/%00/0").status == 404)
        await service.stop()
    }

    @Test(arguments: Backend.allCases) func adminAndUploadTokens(_ backend: Backend) async throws {
        let service = try TestService(backend: backend) { settings in
            settings.auth.adminToken = "admin-secret"
            settings.auth.uploadToken = "upload-secret"
        }
        let bytes = try Corpus.bytes("wuffs/muybridge.gif")
        let anonymous = try service.upload(bytes)
        #expect(anonymous.status == 401)
        #expect(anonymous.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
        #expect(try service.upload(bytes, headers: ["Authorization": "Bearer wrong"]).status == 401)
        // A large refused body is not read to its end: the answer comes at once, then the close.
        let large = try service.upload([UInt8](repeating: 0x47, count: 2 << 20))
        #expect(large.status == 401)
        #expect(large.header("Content-Type") == "application/problem+json")
        #expect(large.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
        #expect(large.header("X-Served-By") == "test-instance")
        let uploaded = try service.upload(bytes, headers: ["Authorization": "Bearer upload-secret"])
        #expect(uploaded.status == 201)
        let id = try #require(uploaded.json["id"] as? String)
        #expect(try service.upload(bytes, headers: ["Authorization": "Bearer upload-secret"]).status == 200)

        #expect(try service.client.send("DELETE", "/images/\(id)").status == 401)
        #expect(
            try service.client.send("DELETE", "/images/\(id)", headers: ["Authorization": "Bearer upload-secret"]).status == 401)
        let pressure = try service.client.send(
            "POST", "/admin/memory-pressure?level=critical",
            headers: ["Authorization": "Bearer admin-secret"])
        #expect(pressure.status == 200)
        #expect((pressure.json["pressure"] as? [String: Any])?["level"] as? String == "critical")
        #expect(
            try service.client.send(
                "POST", "/admin/memory-pressure?level=panic",
                headers: ["Authorization": "Bearer admin-secret"]
            ).status == 400)
        #expect(
            try service.client.send("DELETE", "/images/\(id)", headers: ["Authorization": "Bearer admin-secret"]).status == 204)
        await service.stop()
    }

    @Test(arguments: Backend.allCases) func deletionRemovesTheImageAndItsFiles(_ backend: Backend) async throws {
        let service = try TestService(backend: backend) { $0.auth.adminToken = "t" }
        let id = try #require(try service.upload(Corpus.bytes("wuffs/muybridge.gif")).json["id"] as? String)
        #expect(try service.client.get("/frames/\(id)/2").status == 200)
        let stored = try service.storedObjects(of: id)
        #expect(stored.count >= 2 && stored.allSatisfy(\.exists), "\(stored)")
        #expect(try service.client.send("DELETE", "/images/\(id)", headers: ["Authorization": "Bearer t"]).status == 204)
        #expect(try service.client.get("/images/\(id)").status == 404)
        #expect(try service.client.get("/frames/\(id)/2").status == 404)
        let after = try service.storedObjects(of: id)
        #expect(after.allSatisfy { !$0.exists }, "\(after)")
        #expect(try service.client.send("DELETE", "/images/\(id)", headers: ["Authorization": "Bearer t"]).status == 404)
        let list = try service.client.get("/images").json["images"] as? [[String: Any]]
        #expect(list?.isEmpty == true)
        await service.stop()
    }

    @Test(arguments: Backend.allCases) func imagesSurviveARestart(_ backend: Backend) async throws {
        let directory = TestService.temporaryDirectory()
        var first: TestService? = try TestService(dataDirectory: directory, backend: backend)
        let bucket = first!.bucket
        var ids: [String: [UInt8]] = [:]
        for path in ["wuffs/muybridge.gif", "image-rs-image/images/png/apng/ball.png", "pillow/webp/iss634.webp"] {
            let id = try #require(try first!.upload(Corpus.bytes(path)).json["id"] as? String)
            ids[id] = try first!.client.get("/frames/\(id)/1").body
        }
        let named = try first!.client.send("PUT", "/images/my-orbit.gif", body: try Corpus.bytes("wuffs/muybridge.gif"))
        #expect(named.status == 201)
        await first!.stop()
        first = nil

        // On s3 the second run has an empty local directory: everything comes from the bucket.
        let second = try TestService(
            dataDirectory: backend == .s3 ? TestService.temporaryDirectory() : directory,
            backend: backend, bucket: bucket)
        for (id, frame) in ids {
            #expect(try second.client.get("/images/\(id)").status == 200)
            #expect(try second.client.get("/frames/\(id)/1").body == frame)
        }
        #expect(try second.client.get("/images/my-orbit.gif").status == 200)
        let listed = (try second.client.get("/images").json["images"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
        #expect(Set(listed ?? []) == Set(ids.keys).union(["my-orbit.gif"]))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: second.dataDirectory + "/tmp")
        #expect(leftovers.isEmpty, "temporary files left: \(leftovers)")
        await second.stop()
    }

    @Test(arguments: Backend.allCases) func concurrentUploadsOfTheSameBytesCreateOneImage(_ backend: Backend) async throws {
        let service = try TestService(backend: backend)
        let bytes = try Corpus.bytes("pillow/gif/iss634.gif")
        let statuses = Statuses()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            statuses.append((try? service.upload(bytes).status) ?? 0)
        }
        #expect(statuses.values.sorted() == [200, 200, 200, 200, 200, 200, 200, 201])
        await service.stop()
    }

    @Test(arguments: Backend.allCases) func namedImagesCanBeReplaced(_ backend: Backend) async throws {
        let service = try TestService(backend: backend)
        let first = try service.client.send("PUT", "/images/clip.gif", body: try Corpus.bytes("wuffs/muybridge.gif"))
        #expect(first.status == 201)
        let before = try service.client.get("/frames/clip.gif/0")
        #expect(before.header("Cache-Control") == "no-cache")
        #expect(try service.client.send("PUT", "/images/clip.gif", body: try Corpus.bytes("wuffs/muybridge.gif")).status == 200)
        let replaced = try service.client.send("PUT", "/images/clip.gif", body: try Corpus.bytes("pillow/gif/iss634.gif"))
        #expect(replaced.status == 200)
        #expect(replaced.json["frameCount"] as? Int == 42)
        let after = try service.client.get("/frames/clip.gif/0")
        #expect(after.body != before.body)
        #expect(after.header("ETag") != before.header("ETag"))
        #expect(
            try service.client.send(
                "PUT", "/images/\(String(repeating: "ab", count: 32))",
                body: try Corpus.bytes("wuffs/muybridge.gif")
            ).status == 400)
        await service.stop()
    }

    @Test(arguments: Backend.allCases) func replicasSharingADataDirectorySeeEachOthersImages(_ backend: Backend) async throws {
        // fs: one shared directory; s3: one bucket, and a local directory each (no shared disk).
        let directory = TestService.temporaryDirectory()
        let clock = ManualClock()
        let a = try TestService(dataDirectory: directory, backend: backend) {
            $0.auth.adminToken = "t"; $0.server.instanceName = "a"
        }
        let b = try TestService(
            dataDirectory: backend == .s3 ? TestService.temporaryDirectory() : directory,
            backend: backend, bucket: a.bucket, clock: clock
        ) {
            $0.auth.adminToken = "t"; $0.server.instanceName = "b"
        }
        let id = try #require(try a.upload(Corpus.bytes("wuffs/muybridge.gif")).json["id"] as? String)
        let fromB = try b.client.get("/frames/\(id)/5")
        #expect(fromB.status == 200)
        #expect(fromB.header("X-Served-By") == "b")
        #expect(fromB.body == (try a.client.get("/frames/\(id)/5").body))
        #expect(try b.upload(Corpus.bytes("wuffs/muybridge.gif")).status == 200)
        #expect(try a.client.send("DELETE", "/images/\(id)", headers: ["Authorization": "Bearer t"]).status == 204)
        #expect(try a.client.get("/images/\(id)").status == 404)
        // B trusts its cached record for up to storage.recheckSeconds, then sees the delete.
        #expect(try b.client.get("/images/\(id)").status == 200)
        clock.advance(by: b.server.store.recheckSeconds)
        #expect(try b.client.get("/images/\(id)").status == 404)
        #expect(try b.client.get("/frames/\(id)/5").status == 404)
        await a.stop()
        await b.stop()
    }

    @Test(arguments: Backend.allCases) func headAndRequestIDs(_ backend: Backend) async throws {
        let service = try TestService(backend: backend)
        let id = try #require(try service.upload(Corpus.bytes("wuffs/muybridge.gif")).json["id"] as? String)
        let get = try service.client.get("/frames/\(id)/2")
        let head = try service.client.send("HEAD", "/frames/\(id)/2")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.header("Content-Length") == String(get.body.count))
        #expect(head.header("ETag") == get.header("ETag"))
        #expect(get.header("X-Frame-Index") == "2" && get.header("X-Frame-Count") == "15")
        #expect(get.header("X-Frame-Delay-Ms") != nil)
        #expect(get.header("X-Served-By") == "test-instance")
        let generated = try #require(get.header("X-Request-ID"))
        #expect(generated.count == 16)
        let echoed = try service.client.get("/healthz", headers: ["X-Request-ID": "trace-42"])
        #expect(echoed.header("X-Request-ID") == "trace-42")
        #expect(try service.client.get("/readyz").status == 200)
        let metrics = try service.client.get("/metrics")
        #expect(metrics.text.contains("flipbook_http_requests_total"))
        #expect(metrics.text.contains("flipbook_cache_hits_total") || metrics.text.contains("flipbook_cache_misses_total"))
        // The test client's connection is open and reads its answers: nothing is paused.
        #expect(metrics.text.contains("\nflipbook_http_connections_paused 0\n"))
        #expect(metrics.text.contains("\nflipbook_http_backpressure_pauses_total 0\n"))
        let stats = try service.client.get("/stats").json
        #expect(stats["budgetBytes"] as? Int == 64 << 20)
        await service.stop()
    }

    @Test(arguments: Backend.allCases) func listingIsPaged(_ backend: Backend) async throws {
        let service = try TestService(backend: backend)
        var ids: [String] = []
        for path in [
            "wuffs/muybridge.gif", "pillow/gif/iss634.gif", "image-rs-image/images/png/apng/ball.png",
            "pillow/webp/iss634.webp", "pygif/depth8.gif",
        ] {
            ids.append(try #require(try service.upload(Corpus.bytes(path)).json["id"] as? String))
        }
        var seen: [String] = []
        var cursor: String? = nil
        repeat {
            let page = try service.client.get("/images?limit=2" + (cursor.map { "&after=\($0)" } ?? "")).json
            let images = try #require(page["images"] as? [[String: Any]])
            #expect(images.count <= 2)
            seen += images.compactMap { $0["id"] as? String }
            for entry in images { try Self.expectEntryIsTheDocument(entry, service) }
            cursor = page["next"] as? String
        } while cursor != nil
        #expect(seen == ids.sorted())
        #expect(try service.client.get("/images?limit=0").status == 400)
        await service.stop()
    }

    /// A listing entry shows what the image's metadata document says (its headline fields), its
    /// content hash and how it was stored, and nothing else.
    static func expectEntryIsTheDocument(_ entry: [String: Any], _ service: TestService) throws {
        let id = try #require(entry["id"] as? String)
        let document = try service.client.get("/images/\(id)").json
        let headline = [
            "format", "mimeType", "width", "height", "frameCount", "animated", "playCount", "durationMs", "fileBytes",
        ]
        #expect(Set(entry.keys) == Set(headline + ["id", "sha256", "source"]))
        for key in headline {
            #expect("\(entry[key] ?? "absent")" == "\(document[key] ?? "absent")", "\(id): \(key)")
        }
        #expect(entry["source"] as? String == "upload" && entry["sha256"] as? String == id)
    }
}

final class Statuses: Sendable {
    private let list = Mutex<[Int]>([])
    func append(_ status: Int) { list.withLock { $0.append(status) } }
    var values: [Int] { list.withLock { $0 } }
}
