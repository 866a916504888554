import AnimatedImage
import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// Renditions through the HTTP API, as a client sees them: bytes, types, ETags, `Vary`,
/// `Content-Location`, 304, 400s, and the CLI writing the same bytes.
@Suite("Rendition routes", .serialized, .ownThreads)
struct RenditionRoutesTests {
    static let path = "pillow/gif/iss634.gif"  // 245×245, 42 frames

    func withService(
        _ configure: (inout FlipbookSettings) -> Void = { _ in }, _ body: (TestService, String) throws -> Void
    ) async throws {
        try await TestService.withUpload(of: Self.path, configure: configure, body)
    }

    @Test func noParametersServeTodaysFrameAndAFullSizeRenditionIsTheSame() async throws {
        try await withService { service, id in
            let plain = try service.client.get("/frames/\(id)/5")
            let image = try AnimatedImage(bytes: Corpus.bytes(Self.path))
            let expected = try PNGEncoder().encode(FrameRenderer(image: image).render(5), colorSpace: image.colorSpace)
            #expect(plain.body == expected)
            #expect(plain.header("Content-Type") == "image/png")
            #expect(plain.header("Vary") == nil)
            let same = try service.client.get("/frames/\(id)/5?width=245&format=png&cachebust=7")
            #expect(same.body == plain.body && same.header("ETag") == plain.header("ETag"))
        }
    }

    /// The full-size PNG asked for by a query is the plain frame's cache entry (its key is the
    /// content id, read from the record): a hit when resolved and when remembered, never a decode.
    @Test func aFullSizeRenditionHitsThePlainFramesEntry() async throws {
        try await withService { service, id in
            let plain = try service.client.get("/frames/\(id)/5")
            let before = try service.client.get("/stats").json
            for _ in 0..<3 {
                let same = try service.client.get("/frames/\(id)/5?width=245&format=png")
                #expect(same.status == 200 && same.body == plain.body)
            }
            let after = try service.client.get("/stats").json
            #expect(after["misses"] as? Int == before["misses"] as? Int)
            #expect(after["hits"] as? Int == (before["hits"] as? Int ?? -1) + 3)
        }
    }

    @Test func renditionsHaveTheirSizeTypeAndOwnETags() async throws {
        try await withService { service, id in
            var etags: Set<String> = []
            for (query, type, size) in [
                ("", "image/png", (245, 245)), ("width=100", "image/png", (100, 100)),
                ("width=100&format=webp", "image/webp", (100, 100)),
                ("width=100&format=webp&quality=60", "image/webp", (100, 100)),
                ("width=50&dpr=2", "image/png", (100, 100)), ("width=120&height=60&fit=cover", "image/png", (120, 60)),
                ("width=120&height=60&fit=fill", "image/png", (120, 60)), ("format=webp", "image/webp", (245, 245)),
            ] {
                let response = try service.client.get("/frames/\(id)/3?\(query)")
                #expect(response.status == 200, "\(query): \(response.text)")
                #expect(response.header("Content-Type") == type, "\(query)")
                let decoded = try FrameRenderer(image: AnimatedImage(bytes: response.body)).render(0)
                #expect((decoded.width, decoded.height) == size, "\(query)")
                etags.insert(try #require(response.header("ETag")))
                #expect(response.header("X-Frame-Index") == "3")
            }
            // Two spellings of one rendition are one: same ETag.
            #expect(etags.count == 7, "\(etags)")
            let revalidated = try service.client.get(
                "/frames/\(id)/3?width=100&format=webp",
                headers: ["If-None-Match": try service.client.get("/frames/\(id)/3?width=100&format=webp").header("ETag")!])
            #expect(revalidated.status == 304)
        }
    }

    /// `format=avif` on the frame routes: a still AVIF (lossy; `quality` or 44) whose key names
    /// the quality, kept and revalidated like any rendition; never what `format=auto` chooses,
    /// even for an `Accept` that lists only `image/avif`; and refused as a default format.
    @Test func avifFramesOnlyWhenAskedFor() async throws {
        try await withService { service, id in
            let avif = try service.client.get("/frames/\(id)/3?width=100&format=avif")
            #expect(avif.status == 200, "\(avif.text.prefix(200))")
            #expect(avif.header("Content-Type") == "image/avif" && avif.header("Vary") == nil)
            #expect(String(decoding: avif.body[4..<12], as: UTF8.self) == "ftypavif")
            let etag = try #require(avif.header("ETag"))
            #expect(etag.contains("-100x100-avif-q44-"), "\(etag)")
            let named = try service.client.get("/frames/\(id)/3?width=100&format=avif&quality=44")
            #expect(named.header("ETag") == etag && named.body == avif.body)
            let better = try service.client.get("/frames/\(id)/3?width=100&format=avif&quality=90")
            #expect(better.header("ETag")?.contains("-avif-q90-") == true && better.body.count > avif.body.count)
            #expect(
                try service.client.get("/frames/\(id)/3?width=100&format=avif", headers: ["If-None-Match": etag]).status == 304)
            let auto = try service.client.get("/frames/\(id)/3?width=100&format=auto", headers: ["Accept": "image/avif"])
            #expect(auto.header("Content-Type") == "image/png", "auto never answers AVIF for a frame")
            let chromium = try service.client.get(
                "/frames/\(id)/3?width=100&format=auto", headers: ["Accept": "image/avif,image/webp,*/*"])
            #expect(chromium.header("Content-Type") == "image/webp")
        }
        #expect(throws: RenditionParameterError.self) {
            try RenditionPolicy(defaultFormat: "avif", presets: [], allowArbitrary: true, maxOutputDimension: 4096)
        }
    }

    @Test func varyOnlyWhenTheFormatWasNegotiated() async throws {
        try await withService { service, id in
            let webp = try service.client.get("/frames/\(id)/1?width=80&format=auto", headers: ["Accept": "image/webp,*/*"])
            #expect(webp.header("Content-Type") == "image/webp" && webp.header("Vary") == "Accept")
            let png = try service.client.get("/frames/\(id)/1?width=80&format=auto", headers: ["Accept": "*/*"])
            #expect(png.header("Content-Type") == "image/png" && png.header("Vary") == "Accept")
            #expect(png.header("ETag") != webp.header("ETag"))
            let refused = try service.client.get("/frames/\(id)/1?width=80&format=auto", headers: ["Accept": "image/webp;q=0"])
            #expect(refused.header("Content-Type") == "image/png")
            let explicit = try service.client.get("/frames/\(id)/1?width=80&format=webp", headers: ["Accept": "image/webp"])
            #expect(explicit.header("Vary") == nil)
            let notModified = try service.client.get(
                "/frames/\(id)/1?width=80&format=auto",
                headers: ["Accept": "image/webp", "If-None-Match": webp.header("ETag")!])
            #expect(notModified.status == 304 && notModified.header("Vary") == "Accept")
        }
        try await withService({ $0.renditions.defaultFormat = "auto" }) { service, id in
            let negotiated = try service.client.get("/frames/\(id)/1", headers: ["Accept": "image/webp"])
            #expect(negotiated.header("Content-Type") == "image/webp" && negotiated.header("Vary") == "Accept")
            #expect(try service.client.get("/frames/\(id)/1").header("Content-Type") == "image/png")
        }
    }

    @Test func aQueryResolvedBeforeIsResolvedForEachImageAndEachAccept() async throws {
        try await withService { service, id in
            // A second image of another size: the same query names another rendition of it.
            let other = try service.upload(Corpus.bytes("pillow/gif/dispose_bgnd.gif"))
            let otherID = try #require(other.json["id"] as? String)
            let otherWidth = try #require(other.json["width"] as? Int)
            for round in 0..<3 {
                for (accept, type) in [("image/webp", "image/webp"), ("*/*", "image/png"), ("image/webp;q=0", "image/png")] {
                    let response = try service.client.get("/frames/\(id)/2?width=80&format=auto", headers: ["Accept": accept])
                    #expect(response.header("Content-Type") == type, "round \(round), Accept \(accept)")
                    #expect(response.header("Vary") == "Accept")
                }
                let first = try service.client.get("/frames/\(id)/2?width=300&enlarge=true")
                let second = try service.client.get("/frames/\(otherID)/0?width=300&enlarge=true")
                let firstFrame = try FrameRenderer(image: AnimatedImage(bytes: first.body)).render(0)
                let secondFrame = try FrameRenderer(image: AnimatedImage(bytes: second.body)).render(0)
                #expect(firstFrame.width == 300 && secondFrame.width == 300)
                #expect(first.header("Vary") == nil && first.header("ETag") != second.header("ETag"))
                #expect(
                    try service.client.get("/frames/\(otherID)/0?width=\(otherWidth)").header("ETag")
                        == service.client.get("/frames/\(otherID)/0").header("ETag"))
            }
        }
    }

    @Test func framesAtATimeKeepTheRenditionInTheirLocation() async throws {
        try await withService { service, id in
            let response = try service.client.get("/frames/\(id)?width=64&t=250&format=webp")
            #expect(response.status == 200)
            let location = try #require(response.header("Content-Location"))
            #expect(location.hasPrefix("/frames/\(id)/") && location.hasSuffix("?width=64&format=webp"), "\(location)")
            let same = try service.client.get(location)
            #expect(same.body == response.body && same.header("ETag") == response.header("ETag"))
            #expect(try service.client.get("/frames/\(id)?t=250").header("Content-Location")?.contains("?") == false)
        }
    }

    @Test func badParametersAre400sNamingThem() async throws {
        try await withService { service, id in
            for (query, name) in [
                ("width=abc", "width"), ("dpr=9", "dpr"), ("fit=cover&width=9", "fit"), ("format=gif", "format"),
                ("quality=50", "quality"), ("width=5000", "limits.maxOutputDimension"), ("r=none", "r"),
            ] {
                for path in ["/frames/\(id)/0?\(query)", "/frames/\(id)?t=0&\(query)"] {
                    let response = try service.client.get(path)
                    #expect(response.status == 400, "\(path)")
                    #expect(response.header("Content-Type") == "application/problem+json")
                    #expect((response.json["detail"] as? String)?.contains(name) == true, "\(path): \(response.text)")
                }
            }
        }
    }

    @Test func presetsOnlyServesPresets() async throws {
        try await withService({
            $0.renditions.presets = ["thumb:width=60&format=webp&quality=70"]
            $0.renditions.allowArbitrary = false
        }) { service, id in
            let thumb = try service.client.get("/frames/\(id)/2?r=thumb")
            #expect(thumb.status == 200 && thumb.header("Content-Type") == "image/webp")
            #expect(try service.client.get("/frames/\(id)/2?width=60").status == 400)
            #expect(try service.client.get("/frames/\(id)/2").status == 200)
        }
    }

    @Test func theStatsCountRenditions() async throws {
        try await withService { service, id in
            for k in 0..<4 { _ = try service.client.get("/frames/\(id)/\(k)?width=90") }
            _ = try service.client.get("/frames/\(id)/0?width=70")
            let stats = try service.client.get("/stats").json
            let renditions = try #require(stats["renditions"] as? [String: Any])
            // The two asked for, and the full-size one holding the upload's seek anchors.
            #expect(try !SeekAnchorTests.anchors(of: Corpus.bytes(Self.path)).isEmpty)
            #expect(renditions["entries"] as? Int == 3)
            let rows = try #require(stats["images"] as? [[String: Any]])
            #expect(Set(rows.compactMap { $0["rendition"] as? String }) == ["90x90-png", "70x70-png", "full"])
            #expect(try service.metric("flipbook_cache_renditions") == 3)
            #expect(try service.metric("flipbook_cache_renditions", where: "decode_ahead") == 1)
            #expect(try service.metric("flipbook_cache_renditions", where: "on_demand") == 1)
        }
    }

    @Test func theCacheResidencyOfARendition() async throws {
        try await withService { service, id in
            for k in 0..<3 { _ = try service.client.get("/frames/\(id)/\(k)?width=90&format=webp") }
            let held = try service.client.get("/images/\(id)/cache?width=90&format=webp").json
            #expect(held["rendition"] as? String == "90x90-webp-ll")
            #expect((held["cachedFrames"] as? [Int])?.starts(with: [0, 1, 2]) == true)
            #expect(held["playhead"] as? Int == 2)
            let full = try service.client.get("/images/\(id)/cache").json
            #expect(full["rendition"] as? String == "full")
            // Not asked for: only the seek anchors the upload's verification left.
            #expect(try (full["cachedFrames"] as? [Int]) == SeekAnchorTests.anchors(of: Corpus.bytes(Self.path)))
            #expect(try service.client.get("/images/\(id)/cache?width=0").status == 400)
        }
    }

    /// A player asks with `format=auto` and an `Accept` that lists WebP; a page asking with the
    /// same query but `fetch`'s `*/*` would hear of PNG frames nobody plays. The rendition key,
    /// read from the frames' ETag (or the answer), names the played rendition whatever the
    /// `Accept` of the one asking.
    @Test func theCacheResidencyOfARenditionNamedByItsKey() async throws {
        try await withService { service, id in
            let webp = ["Accept": "image/webp,image/png;q=0.9"]
            var etags: [String] = []
            for k in 0..<3 {
                let frame = try service.client.get("/frames/\(id)/\(k)?width=90&format=auto&quality=55", headers: webp)
                etags.append(try #require(frame.header("ETag")))
            }
            #expect(etags.allSatisfy { $0.hasSuffix("-90x90-webp-q55-r\(AnimatedImage.outputRevision)\"") }, "\(etags)")
            let played = try service.client.get("/images/\(id)/cache?width=90&format=auto&quality=55", headers: webp).json
            #expect(played["rendition"] as? String == "90x90-webp-q55")
            #expect((played["cachedFrames"] as? [Int])?.starts(with: [0, 1, 2]) == true)
            let asPNG = try service.client.get("/images/\(id)/cache?width=90&format=auto&quality=55").json
            #expect(asPNG["rendition"] as? String == "90x90-png" && asPNG["cachedFrames"] as? [Int] == [])
            let named = try service.client.get("/images/\(id)/cache?rendition=90x90-webp-q55")
            #expect(named.status == 200 && named.header("Vary") == nil)
            #expect(named.json["rendition"] as? String == "90x90-webp-q55")
            #expect(named.json["cachedFrames"] as? [Int] == played["cachedFrames"] as? [Int])
            #expect(named.json["playhead"] as? Int == 2)
            // `full`, and the key of the full-size PNG, name the full-size frames.
            let full = try service.client.get("/images/\(id)/cache").json
            for name in ["full", "245x245-png"] {
                let answer = try service.client.get("/images/\(id)/cache?rendition=\(name)").json
                #expect(answer["rendition"] as? String == "full", "\(name)")
                #expect(answer["cachedFrames"] as? [Int] == full["cachedFrames"] as? [Int], "\(name)")
            }
            // A key no request made: nothing held. (A crop's `+` is sent as %2B: `+` in a query is a space.)
            let other = try service.client.get("/images/\(id)/cache?rendition=60x60%2B10%2B0-40x60-webp-ll").json
            #expect(other["rendition"] as? String == "60x60+10+0-40x60-webp-ll" && other["cachedFrames"] as? [Int] == [])
            for bad in [
                "rendition=090x90-png", "rendition=90x90-webp-q0", "rendition=90x90-jpeg", "rendition=90x90",
                "rendition=60x60%2B30%2B0-40x60-png", "rendition=60x60+10+0-40x60-png", "rendition=",
                "rendition=90x90-png&width=90",
                "rendition=full&rendition=full",
            ] {
                let answer = try service.client.get("/images/\(id)/cache?\(bad)")
                #expect(answer.status == 400, "\(bad)")
                #expect(answer.header("Content-Type") == "application/problem+json", "\(bad)")
            }
            #expect(try service.client.get("/images/nope/cache?rendition=full").status == 404)
        }
    }

    @Test func theCLIWritesTheBytesTheServiceServes() async throws {
        let flipbook = try flipbookExecutable()
        let file = Corpus.root.appendingPathComponent(Self.path).path
        let directory = NSTemporaryDirectory() + "flipbook-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withService { service, id in
            for (flags, query) in [
                (["--width", "100", "--format", "webp", "--quality", "70"], "width=100&format=webp&quality=70"),
                (["--width", "90", "--height", "40", "--fit", "cover"], "width=90&height=40&fit=cover"),
                (["--width", "60", "--dpr", "1.5", "--format", "webp"], "width=60&dpr=1.5&format=webp"),
            ] {
                let out = directory + "/" + UUID().uuidString
                let result = try runProcess(flipbook, ["frame", file, "7", "-o", out] + flags)
                #expect(result.status == 0, "\(result.stderr)")
                let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
                #expect(try service.client.get("/frames/\(id)/7?\(query)").body == written, "\(flags)")
            }
            let frames = directory + "/all"
            let result = try runProcess(flipbook, ["frames", file, "-o", frames, "--width", "50", "--format", "webp"])
            #expect(result.status == 0, "\(result.stderr)")
            for k in [0, 41] {
                let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: frames + String(format: "/frame_%04d.webp", k))))
                #expect(try service.client.get("/frames/\(id)/\(k)?width=50&format=webp").body == written)
            }
        }
    }
}
