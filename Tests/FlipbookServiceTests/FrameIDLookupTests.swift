import AnimatedImage
import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService
@testable import ImageStorage

/// Whatever happens to the image while its frames are cached — replaced, deleted, purged,
/// re-indexed — the next request never gets the old record or frame; ids that were never
/// stored are 404; percent-encoded ids name the same image as plain ones.
@Suite("Frame requests for ids replaced, deleted, purged, re-indexed, unknown or encoded", .ownThreads)
struct FrameIDLookupTests {
    /// Every byte of `id` percent-encoded, alternately in upper and lower case.
    static func percentEncoded(_ id: String) -> String {
        id.utf8.enumerated().map { String(format: $0.offset % 2 == 0 ? "%%%02X" : "%%%02x", UInt32($0.element)) }.joined()
    }

    /// Asks for `path` twice, the second time once decode-ahead has settled: that answer comes
    /// from the cache (a hit is counted).
    static func cachedFrame(_ service: TestService, _ path: String) throws -> HTTPTestResponse {
        _ = try service.client.get(path)
        service.server.cache.waitUntilIdle()
        let hits = service.server.cache.stats().hits
        let hit = try service.client.get(path)
        #expect(service.server.cache.stats().hits > hits, "\(path) answered from the cache")
        return hit
    }

    @Test func aReplacedNamedImageNeverServesItsOldRecordOrFrames() async throws {
        let service = try TestService()
        #expect(try service.client.send("PUT", "/images/clip.gif", body: Corpus.bytes("wuffs/muybridge.gif")).status == 201)
        let before = try Self.cachedFrame(service, "/frames/clip.gif/3")
        #expect(before.status == 200)
        let replaced = try service.client.send("PUT", "/images/clip.gif", body: Corpus.bytes("pillow/gif/iss634.gif"))
        #expect(replaced.status == 200)
        for path in ["/frames/clip.gif/3", "/frames/\(Self.percentEncoded("clip.gif"))/3", "/frames/clip.gif/3"] {
            let after = try service.client.get(path)
            #expect(after.status == 200, "\(path)")
            #expect(after.body != before.body, "\(path)")
            #expect(after.header("ETag") != before.header("ETag"), "\(path)")
            #expect(after.header("X-Frame-Count") == "42", "\(path)")
        }
        await service.stop()
    }

    @Test func aDeletedImageIs404AtOnceThoughItsFramesWereCached() async throws {
        let service = try TestService { $0.auth.adminToken = "t" }
        let id = try #require(try service.upload(Corpus.bytes("wuffs/muybridge.gif")).json["id"] as? String)
        #expect(try service.client.send("PUT", "/images/named.gif", body: Corpus.bytes("pillow/gif/iss634.gif")).status == 201)
        #expect(try Self.cachedFrame(service, "/frames/\(id)/2").status == 200)
        #expect(try Self.cachedFrame(service, "/frames/named.gif/2").status == 200)
        for deleted in [id, "named.gif"] {
            #expect(try service.client.send("DELETE", "/images/\(deleted)", headers: ["Authorization": "Bearer t"]).status == 204)
            for path in ["/frames/\(deleted)/2", "/frames/\(Self.percentEncoded(deleted))/2", "/frames/\(deleted)?t=0"] {
                #expect(try service.client.get(path).status == 404, "\(path)")
                #expect(try service.client.send("HEAD", path).status == 404, "HEAD \(path)")
            }
        }
        await service.stop()
    }

    @Test func framesPurgedWhileCachedAreMadeAgainTheSame() async throws {
        let service = try TestService()
        let id = try #require(try service.upload(Corpus.bytes("wuffs/muybridge.gif")).json["id"] as? String)
        let before = try Self.cachedFrame(service, "/frames/\(id)/4")
        service.server.cache.memoryPressure(.critical, source: "test")
        let after = try service.client.get("/frames/\(id)/4")
        #expect(after.status == 200 && after.body == before.body)
        #expect(after.header("ETag") == before.header("ETag"))
        let encoded = try service.client.get("/frames/\(Self.percentEncoded(id))/4")
        #expect(encoded.status == 200 && encoded.body == before.body)
        await service.stop()
    }

    @Test func aRecordReindexedWhileItsFramesAreCachedIsNeverServedStale() async throws {
        let clock = ManualClock()
        let service = try TestService(clock: clock)
        let id = try #require(try service.upload(Corpus.bytes("wuffs/muybridge.gif")).json["id"] as? String)
        let document = try service.client.get("/images/\(id)")
        let frame = try Self.cachedFrame(service, "/frames/\(id)/0")
        #expect(frame.status == 200)

        // Another build, of an older output revision, rewrites the record with other timing.
        let url = URL(fileURLWithPath: DataLayout(dataDirectory: service.dataDirectory).recordPath(id))
        let current = try StoredImage.decode([UInt8](Data(contentsOf: url)))
        var old = current
        old.outputRevision = nil
        old.metadata.frames[0].rawDelayMs += 500
        old.metadata.durationMs += 500
        try old.encoded().write(to: url, options: .atomic)
        // A time at which the old timing would show another frame than the current one.
        let differing = (0..<5000).first { ms in
            FrameRoutes.frameIndex(old, at: PlaybackTime(milliseconds: ms))
                != FrameRoutes.frameIndex(current, at: PlaybackTime(milliseconds: ms))
        }
        let time = try #require(differing)
        clock.advance(by: service.server.store.recheckSeconds)

        let atTime = try service.client.get("/frames/\(id)?t=\(time)")
        #expect(atTime.status == 200)
        #expect(atTime.header("X-Frame-Index") == String(FrameRoutes.frameIndex(current, at: PlaybackTime(milliseconds: time))))
        let again = try service.client.get("/frames/\(id)/0")
        #expect(again.status == 200 && again.body == frame.body)
        #expect(again.header("X-Frame-Delay-Ms") == frame.header("X-Frame-Delay-Ms"))
        #expect(try service.client.get("/images/\(id)").body == document.body)
        let rewritten = try StoredImage.decode([UInt8](Data(contentsOf: url)))
        #expect(rewritten.outputRevision == AnimatedImage.outputRevision)
        await service.stop()
    }

    @Test func idsNeverStoredAre404EvenBesideCachedOnes() async throws {
        let service = try TestService()
        let id = try #require(try service.upload(Corpus.bytes("wuffs/muybridge.gif")).json["id"] as? String)
        #expect(try service.client.send("PUT", "/images/clip.gif", body: Corpus.bytes("wuffs/muybridge.gif")).status == 201)
        #expect(try Self.cachedFrame(service, "/frames/\(id)/1").status == 200)
        #expect(try Self.cachedFrame(service, "/frames/clip.gif/1").status == 200)
        // One byte changed, one short, one more, another case; a name's neighbours, some encoded.
        let last = id.last == "0" ? "1" : "0"
        let unknown = [
            String(id.dropLast()) + last, String(id.dropLast()), id + "0", id.uppercased(),
            "clip.gi", "clip.gif0", "Clip.gif", String(repeating: "0", count: 64), "clip%2Egi", "clip%2E",
        ]
        for other in unknown {
            #expect(try service.client.get("/frames/\(other)/1").status == 404, "\(other)")
            #expect(try service.client.get("/frames/\(other)?t=0").status == 404, "\(other) at a time")
        }
        #expect(try service.client.get("/frames/\(id)/1").status == 200, "the stored id still answers")
        await service.stop()
    }

    @Test func percentEncodedIDsAreTheSameImage() async throws {
        let service = try TestService()
        let id = try #require(try service.upload(Corpus.bytes("wuffs/muybridge.gif")).json["id"] as? String)
        #expect(try service.client.send("PUT", "/images/a.b_c-d", body: Corpus.bytes("wuffs/muybridge.gif")).status == 201)
        for stored in [id, "a.b_c-d"] {
            let plain = try Self.cachedFrame(service, "/frames/\(stored)/6")
            let encoded = try Self.cachedFrame(service, "/frames/\(Self.percentEncoded(stored))/6")
            let partly = try service.client.get(
                "/frames/%\(String(format: "%02X", UInt32(stored.utf8.first!)))\(stored.dropFirst())/6")
            for response in [encoded, partly] {
                #expect(response.status == 200 && response.body == plain.body, "\(stored)")
                #expect(response.header("ETag") == plain.header("ETag"), "\(stored)")
            }
            let atTime = try service.client.get("/frames/\(Self.percentEncoded(stored))?t=0")
            #expect(atTime.status == 200 && atTime.header("Content-Location") == "/frames/\(stored)/0")
        }
        await service.stop()
    }
}
