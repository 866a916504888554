import AnimatedImage
import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Synchronization
import Testing

@testable import FlipbookService

/// Previews and storyboards through the HTTP API: what they hold, how they are cached and
/// revalidated, one build for concurrent requests, kept across a restart, deleted with their
/// image, and the limits and 400s.
@Suite("Derived products", .serialized, .ownThreads)
struct DerivedRoutesTests {
    static let path = "pillow/gif/iss634.gif"  // 245×245, 42 frames

    func withService(
        dataDirectory: String? = nil, _ configure: (inout FlipbookSettings) -> Void = { _ in },
        _ body: (TestService, String) async throws -> Void
    ) async throws {
        try await TestService.withUpload(of: Self.path, dataDirectory: dataDirectory, configure: configure, body)
    }

    @Test func previewHasTheFramesDelaysAndLoopCountAndIsCached() async throws {
        try await withService { service, id in
            let response = try service.client.get("/images/\(id)/preview?width=100")
            #expect(response.status == 200, "\(response.text)")
            #expect(response.header("Content-Type") == "image/webp")
            #expect(response.header("Cache-Control") == "public, max-age=31536000, immutable")
            let preview = try AnimatedImage(bytes: response.body)
            let original = try AnimatedImage(bytes: Corpus.bytes(Self.path))
            #expect(preview.frameCount == original.frameCount)
            #expect(preview.timeline.rawDelaysMs == original.timeline.delaysMs)
            #expect(preview.timeline.playCount == original.timeline.playCount)
            #expect((preview.canvasWidth, preview.canvasHeight) == (100, 100))
            let etag = try #require(response.header("ETag"))
            #expect(try service.client.get("/images/\(id)/preview?width=100", headers: ["If-None-Match": etag]).status == 304)
            let again = try service.client.get("/images/\(id)/preview?width=50&dpr=2")
            #expect(again.body == response.body && again.header("ETag") == etag)
            let lossy = try service.client.get("/images/\(id)/preview?width=100&quality=60")
            #expect(lossy.status == 200 && lossy.header("ETag") != etag && lossy.body.count < response.body.count)
        }
    }

    @Test func previewRefusals() async throws {
        try await withService { service, id in
            let notAcceptable = try service.client.get("/images/\(id)/preview", headers: ["Accept": "image/png"])
            #expect(notAcceptable.status == 406 && notAcceptable.text.contains("image/webp"))
            let noWebP = ["Accept": "image/webp;q=0, */*"]
            #expect(try service.client.get("/images/\(id)/preview?width=40&format=webp", headers: noWebP).status == 406)
            // Without `format` the same Accept is negotiated: WebP refused, anything else taken.
            let negotiated = try service.client.get("/images/\(id)/preview?width=40", headers: noWebP)
            #expect(negotiated.status == 200 && negotiated.header("Content-Type") == "image/avif")
            #expect(try service.client.get("/images/\(id)/preview?width=40", headers: ["Accept": "*/*"]).status == 200)
            for (query, named) in [
                ("width=abc", "width"), ("format=png", "format"), ("quality=0", "quality"), ("fit=cover&width=5", "fit"),
                ("width=5000", "limits.maxOutputDimension"),
            ] {
                let refused = try service.client.get("/images/\(id)/preview?\(query)")
                #expect(refused.status == 400 && refused.text.contains(named), "\(query): \(refused.text)")
            }
            #expect(try service.client.get("/images/nope/preview").status == 404)
        }
    }

    @Test func storyboardManifestTrackAndSheets() async throws {
        try await withService { service, id in
            let manifest = try service.client.get("/images/\(id)/storyboard?tile=50&columns=8&format=png")
            #expect(manifest.status == 200, "\(manifest.text)")
            let json = manifest.json
            #expect(
                Set(json.keys)
                    == ["id", "tileWidth", "tileHeight", "columns", "rows", "durationMs", "playCount", "sheets", "tiles"])
            #expect(json["id"] as? String == id && json["tileWidth"] as? Int == 50 && json["tileHeight"] as? Int == 50)
            let tiles = try #require(json["tiles"] as? [[String: Any]])
            #expect(tiles.count == 42)
            #expect(Set(tiles[0].keys) == ["index", "sheet", "x", "y", "width", "height", "startMs", "durationMs"])
            let sheets = try #require(json["sheets"] as? [[String: Any]])
            let url = try #require(sheets.first?["url"] as? String)
            let sheet = try service.client.get(url)
            #expect(sheet.status == 200 && sheet.header("Content-Type") == "image/png")
            #expect(sheet.header("Cache-Control") == "public, max-age=31536000, immutable")
            let decoded = try AnimatedImage(bytes: sheet.body)
            #expect(decoded.canvasWidth == sheets[0]["width"] as? Int && decoded.canvasHeight == sheets[0]["height"] as? Int)
            // The track: one cue per tile, the same times, the sheet relative to the track.
            let track = try service.client.get("/images/\(id)/storyboard.vtt?tile=50&columns=8&format=png")
            #expect(track.status == 200 && track.header("Content-Type") == "text/vtt; charset=utf-8")
            let cues = track.text.components(separatedBy: "\n\n").dropFirst()
            #expect(cues.count == tiles.count)
            let first = cues.first!.split(separator: "\n")
            let start = try #require(tiles[0]["startMs"] as? Int)
            let duration = try #require(tiles[0]["durationMs"] as? Int)
            #expect(
                first[0]
                    == "\(StoryboardDocuments.timestamp(start)) --> \(StoryboardDocuments.timestamp(start + duration))")
            #expect(first[1] == "../..\(url)#xywh=0,0,50,50")
            let etag = try #require(manifest.header("ETag"))
            let revalidated = try service.client.get(
                "/images/\(id)/storyboard?tile=50&columns=8&format=png", headers: ["If-None-Match": etag])
            #expect(revalidated.status == 304)
            #expect(try service.client.get("/derived/\(String(repeating: "a", count: 64))/storyboard-x/0.png").status == 404)
        }
    }

    @Test func storyboardRefusalsNameTheParameter() async throws {
        try await withService({ $0.derived.maxSheetPixels = 10_000 }) { service, id in
            for (query, named) in [
                ("tile=0", "tile"), ("tile=abc", "tile"), ("columns=-1", "columns"), ("frames=some", "frames"),
                ("frames=interval=0", "frames"), ("format=gif", "format"), ("format=png&quality=50", "quality"),
                ("tile=2000&columns=10", "columns"), ("tile=5000&columns=1", "tile"), ("tile=160", "derived.maxSheetPixels"),
                ("tile=10&tile=20", "tile"),
                // Found by schemathesis: this one overflowed and stopped the server.
                ("columns=2&tile=55702705535802000", "tile"), ("tile=100&tileHeight=99999999999999999999", "tileHeight"),
                ("tile=100&columns=99999999999999999999", "columns"),
            ] {
                let refused = try service.client.get("/images/\(id)/storyboard?\(query)")
                #expect(refused.status == 400 && refused.text.contains(named), "\(query): \(refused.text)")
                let vtt = try service.client.get("/images/\(id)/storyboard.vtt?\(query)")
                #expect(vtt.status == 400, "\(query): \(vtt.text)")
            }
            #expect(try service.client.get("/healthz").status == 200)
        }
    }

    @Test func concurrentRequestsShareOneBuild() async throws {
        try await withService { service, id in
            let bodies = Mutex<[[UInt8]]>([])
            DispatchQueue.concurrentPerform(iterations: 6) { _ in
                let response = try? service.client.get("/images/\(id)/preview?width=120&quality=70")
                bodies.withLock { $0.append(response?.status == 200 ? response!.body : []) }
            }
            let all = bodies.withLock { $0 }
            #expect(all.count == 6 && Set(all).count == 1 && !all[0].isEmpty)
            #expect(service.server.derived.builds.counts().started == 1)
        }
    }

    @Test func productsAreKeptAcrossARestartAndDeletedWithTheImage() async throws {
        let directory = TestService.temporaryDirectory()
        var first: [UInt8] = []
        try await withService(dataDirectory: directory) { service, id in
            first = try service.client.get("/images/\(id)/preview?width=64").body
            #expect(try service.client.get("/images/\(id)/storyboard?tile=32").status == 200)
        }
        try await withService(dataDirectory: directory, { $0.auth.adminToken = "secret" }) { service, id in
            let again = try service.client.get("/images/\(id)/preview?width=64")
            #expect(again.status == 200 && again.body == first)
            let manifest = try service.client.get("/images/\(id)/storyboard?tile=32").json
            #expect(service.server.derived.builds.counts().started == 0)
            let sheet = try #require((manifest["sheets"] as? [[String: Any]])?.first?["url"] as? String)
            #expect(try service.client.get(sheet).status == 200)
            let deleted = try service.client.send("DELETE", "/images/\(id)", headers: ["Authorization": "Bearer secret"])
            #expect(deleted.status == 204)
            #expect(try service.client.get(sheet).status == 404)
            let sha = String(sheet.split(separator: "/")[1])
            #expect(!FileManager.default.fileExists(atPath: directory + "/derived/" + sha))
        }
    }

    @Test func aSlowBuildAnswers503AndGoesOn() async throws {
        try await withService({ $0.derived.maxWaitSeconds = 0 }) { service, id in
            let first = try service.client.get("/images/\(id)/preview?width=200")
            #expect(first.status == 503 && first.header("Retry-After") == "1")
            var status = first.status
            for _ in 0..<100 where status != 200 {
                try await Task.sleep(for: .milliseconds(100))
                status = try service.client.get("/images/\(id)/preview?width=200").status
            }
            #expect(status == 200)
            #expect(service.server.derived.builds.counts().started == 1)
        }
    }

    @Test func aProductOverTheOutputLimitIs422() async throws {
        try await withService({ $0.derived.maxOutputBytes = 2000 }) { service, id in
            let refused = try service.client.get("/images/\(id)/preview?width=100")
            #expect(refused.status == 422 && refused.text.contains("derived.maxOutputBytes"), "\(refused.text)")
            let storyboard = try service.client.get("/images/\(id)/storyboard")
            #expect(storyboard.status == 422 && storyboard.text.contains("derived.maxOutputBytes"))
        }
    }

    @Test func theLeastRecentlyUsedProductGoesBeyondTheByteLimit() async throws {
        let queries = ["width=60&quality=50", "width=70&quality=50"]
        var sizes: [Int] = []
        try await withService { service, id in
            sizes = try queries.map { try service.client.get("/images/\(id)/preview?\($0)").body.count }
        }
        try await withService({ $0.derived.maxBytes = sizes[0] + sizes[1] - 1 }) { service, id in
            for query in queries { #expect(try service.client.get("/images/\(id)/preview?\(query)").status == 200) }
            let stats = try service.client.get("/stats").json["derived"] as? [String: Int]
            // The upload's seek anchors were the least recently used and went first, then the
            // first preview.
            #expect(stats?["evictions"] == 2 && stats?["bytes"] == sizes[1] && stats?["products"] == 1, "\(stats ?? [:])")
            #expect(try service.client.get("/images/\(id)/preview?\(queries[0])").status == 200)
            #expect(service.server.derived.builds.counts().started == 3)
        }
    }
}
