import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// Cached frames are answered from the responses encoded when they entered the cache: the same
/// bytes and headers as the first answer, 304 and HEAD alike, and the caching headers of the id
/// asked for even when two ids share one cache entry.
@Suite("Cached frames", .ownThreads)
struct CachedFrameTests {
    static let frameFields = [
        "Content-Type", "ETag", "Cache-Control", "X-Frame-Index", "X-Frame-Count",
        "X-Frame-Delay-Ms", "X-Served-By",
    ]

    @Test func hitsRepeatTheFirstAnswerAndEachIDKeepsItsCachingHeaders() async throws {
        let service = try TestService()
        let bytes = try Corpus.bytes("wuffs/muybridge.gif")
        let id = try #require(try service.upload(bytes).json["id"] as? String)
        #expect(try service.client.send("PUT", "/images/same.gif", body: bytes).status == 201)
        let first = try service.client.get("/frames/\(id)/5")
        #expect(first.status == 200)
        service.server.cache.waitUntilIdle()
        let hitsBefore = service.server.cache.stats().hits
        for _ in 0..<3 {
            let hit = try service.client.get("/frames/\(id)/5")
            #expect(hit.status == 200 && hit.body == first.body)
            for field in Self.frameFields { #expect(hit.header(field) == first.header(field), "\(field)") }
            #expect(hit.header("X-Request-ID") != nil && hit.header("X-Request-ID") != first.header("X-Request-ID"))
        }
        #expect(service.server.cache.stats().hits >= hitsBefore + 3)

        let named = try service.client.get("/frames/same.gif/5")
        #expect(named.body == first.body)
        #expect(named.header("Cache-Control") == "no-cache")
        #expect(named.header("ETag") == first.header("ETag"))
        #expect(first.header("Cache-Control") == "public, max-age=31536000, immutable")

        let etag = try #require(first.header("ETag"))
        let notModified = try service.client.get("/frames/\(id)/5", headers: ["If-None-Match": "\"x\", W/\(etag)"])
        #expect(notModified.status == 304 && notModified.body.isEmpty)
        #expect(notModified.header("ETag") == etag)
        #expect(notModified.header("Cache-Control") == "public, max-age=31536000, immutable")
        #expect(notModified.header("X-Served-By") == "test-instance" && notModified.header("X-Request-ID") != nil)
        let namedNotModified = try service.client.get("/frames/same.gif/5", headers: ["If-None-Match": etag])
        #expect(namedNotModified.status == 304 && namedNotModified.header("Cache-Control") == "no-cache")

        let head = try service.client.send("HEAD", "/frames/\(id)/5")
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.header("Content-Length") == String(first.body.count))
        for field in Self.frameFields { #expect(head.header(field) == first.header(field), "HEAD \(field)") }

        let atTime = try service.client.get("/frames/\(id)?t=0")
        #expect(atTime.header("Content-Location") == "/frames/\(id)/0")
        #expect(atTime.header("X-Frame-Index") == "0")
        await service.stop()
    }
}
