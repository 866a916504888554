import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService
@testable import ImageStorage

/// The browser pages and their files (`/`, `/player/{id}`, `/ui/{file}`), the cache-residency
/// route the player page polls, and cross-origin access (`server.corsOrigins`).
@Suite("Web UI and CORS", .serialized, .ownThreads)
struct WebUIAndCORSTests {
    static func sample(_ name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: TestService.webDirectory).deletingLastPathComponent()
            .appendingPathComponent("Samples").appendingPathComponent(name)
        return [UInt8](try Data(contentsOf: url))
    }

    @Test func pagesAndFilesAreServedWithValidatorsAndAStrictPolicy() async throws {
        let service = try TestService()
        defer { Task { await service.stop() } }
        let onDisk = [UInt8](try Data(contentsOf: URL(fileURLWithPath: TestService.webDirectory + "/flipbook-player.js")))
        let script = try service.client.get("/ui/flipbook-player.js")
        #expect(script.status == 200)
        #expect(script.body == onDisk)
        #expect(script.header("Content-Type") == "text/javascript; charset=utf-8")
        #expect(script.header("Cache-Control") == "no-cache")
        #expect(script.header("X-Content-Type-Options") == "nosniff")
        let etag = try #require(script.header("ETag"))
        #expect(etag == "\"w-\(ContentHash.sha256Hex(onDisk).prefix(32))\"")
        let again = try service.client.get("/ui/flipbook-player.js", headers: ["If-None-Match": etag])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.header("ETag") == etag)

        let browser = try service.client.get("/")
        #expect(browser.status == 200)
        #expect(browser.header("Content-Type") == "text/html; charset=utf-8")
        let policy = try #require(browser.header("Content-Security-Policy"))
        #expect(policy.contains("script-src 'self'") && policy.contains("style-src 'self'"))
        #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
        #expect(policy.contains("default-src 'none'"))
        #expect(browser.header("X-Served-By") == "test-instance")

        // The player page is the same file for every id; an unknown id is a 404 the page explains.
        let id = try #require(try service.upload(Self.sample("orbit.gif")).json["id"] as? String)
        let player = try service.client.get("/player/\(id)")
        #expect(player.status == 200)
        #expect(player.header("Content-Security-Policy") == policy)
        let unknown = try service.client.get("/player/no-such-image")
        #expect(unknown.status == 404)
        #expect(unknown.body == player.body)

        #expect(try service.client.get("/ui/missing.js").status == 404)
        #expect(try service.client.get("/ui/..%2FPackage.swift").status == 404)
        #expect(try service.client.send("HEAD", "/ui/flipbook-player.js").header("Content-Length") == String(onDisk.count))
    }

    @Test func pagesAreServedWithTheirSharedHeadIncludedAndTheFragmentIsNot() async throws {
        let service = try TestService()
        defer { Task { await service.stop() } }
        let head = try String(contentsOfFile: TestService.webDirectory + "/_head.html", encoding: .utf8)
        let id = try #require(try service.upload(Self.sample("orbit.gif")).json["id"] as? String)
        for path in ["/", "/player/\(id)"] {
            let page = String(decoding: try service.client.get(path).body, as: UTF8.self)
            #expect(page.hasPrefix(head), "\(path) starts with web/_head.html")
            #expect(!page.contains("<!--#include"))
        }
        #expect(try service.client.get("/ui/_head.html").status == 404)
    }

    @Test func aPageIncludesFragmentsLineByLineAndAMissingOneIsAnError() throws {
        let files: [String: [UInt8]] = [
            "_top.html": Array("<head>\n<meta charset=\"utf-8\">\n".utf8),
            "page.html": Array("<!doctype html>\n  <!--#include _top.html-->\n<title>t</title>\n".utf8),
            "plain.html": Array("<p><!--#include _top.html--></p>".utf8),
        ]
        let assets = try WebAssets(files: files)
        #expect(assets["_top.html"] == nil)
        #expect(assets["page.html"]?.body == Array("<!doctype html>\n<head>\n<meta charset=\"utf-8\">\n<title>t</title>\n".utf8))
        #expect(assets["plain.html"]?.body == files["plain.html"])
        #expect(throws: WebAssets.MissingFragment.self) {
            try WebAssets(files: ["page.html": Array("<!--#include _gone.html-->\n".utf8)])
        }
        #expect(throws: WebAssets.MissingFragment.self) {
            try WebAssets(files: ["page.html": Array("<!--#include ../Package.swift-->\n".utf8), "_x.html": []])
        }
    }

    @Test func withoutAUIDirectoryThereAreNoPages() async throws {
        let service = try TestService { $0.ui.dir = "" }
        defer { Task { await service.stop() } }
        #expect(try service.client.get("/").status == 404)
        #expect(try service.client.get("/ui/flipbook-player.js").status == 404)
        #expect(try service.client.get("/healthz").status == 200)
    }

    @Test func theCacheRouteShowsWhichFramesTheServerHolds() async throws {
        let service = try TestService()
        defer { Task { await service.stop() } }
        let id = try #require(try service.upload(Self.sample("orbit.webp")).json["id"] as? String)
        let cold = try service.client.get("/images/\(id)/cache")
        #expect(cold.status == 200)
        #expect(cold.header("Cache-Control") == "no-store")
        #expect(cold.json["cachedFrames"] as? [Int] == [])
        #expect(cold.json["playhead"] is NSNull)
        #expect(cold.json["frameCount"] as? Int == 12)

        #expect(try service.client.get("/frames/\(id)/5").status == 200)
        service.server.cache.waitUntilIdle()
        let warm = try service.client.get("/images/\(id)/cache")
        let cached = try #require(warm.json["cachedFrames"] as? [Int])
        #expect(warm.json["playhead"] as? Int == 5)
        #expect(cached.contains(5))
        #expect(cached == cached.sorted())
        #expect(cached == service.server.cache.residency(of: ContentHash.sha256Hex(try Self.sample("orbit.webp")))?.cachedFrames)
        let window = try #require(warm.json["window"] as? Int)
        #expect(window >= 1)
        // Reading it is not a request for a frame: the playhead stays.
        #expect(try service.client.get("/images/\(id)/cache").json["playhead"] as? Int == 5)
        #expect(try service.client.get("/images/nope/cache").status == 404)
    }

    @Test func corsIsOffByDefault() async throws {
        let service = try TestService()
        defer { Task { await service.stop() } }
        let response = try service.client.get("/images", headers: ["Origin": "https://example.com"])
        #expect(response.status == 200)
        #expect(response.header("Access-Control-Allow-Origin") == nil)
        #expect(response.header("Vary") == nil)
        let options = try service.client.send(
            "OPTIONS", "/images",
            headers: [
                "Origin": "https://example.com", "Access-Control-Request-Method": "POST",
            ])
        #expect(options.status == 204)
        #expect(options.header("Allow") == "POST, GET, HEAD, OPTIONS")
        #expect(options.header("Access-Control-Allow-Origin") == nil)
        #expect(options.header("X-Request-ID") != nil)
    }

    @Test func listedOriginsGetCORSHeadersOnEveryKindOfResponse() async throws {
        let service = try TestService { $0.server.corsOrigins = ["https://app.example", "http://localhost:3000"] }
        defer { Task { await service.stop() } }
        let origin = ["Origin": "https://app.example"]
        let id = try #require(try service.upload(Self.sample("orbit.gif")).json["id"] as? String)
        for path in ["/images", "/images/\(id)", "/frames/\(id)/0", "/frames/\(id)/99", "/nowhere", "/ui/flipbook-player.js"] {
            let response = try service.client.get(path, headers: origin)
            #expect(response.header("Access-Control-Allow-Origin") == "https://app.example", "\(path)")
            #expect(response.header("Vary") == "Origin", "\(path)")
            #expect(response.header("Access-Control-Expose-Headers")?.contains("X-Frame-Delay-Ms") == true, "\(path)")
        }
        let notAllowed = try service.client.send("PUT", "/frames/\(id)/0", headers: origin)
        #expect(notAllowed.status == 405)
        #expect(notAllowed.header("Access-Control-Allow-Origin") == "https://app.example")
        #expect(notAllowed.header("Allow") == "GET, HEAD, OPTIONS")

        // Another origin: no permission, but still Vary so caches keep the answers apart.
        let other = try service.client.get("/images/\(id)", headers: ["Origin": "https://evil.example"])
        #expect(other.status == 200)
        #expect(other.header("Access-Control-Allow-Origin") == nil)
        #expect(other.header("Vary") == "Origin")

        // Preflight for an upload with a token.
        let preflight = try service.client.send(
            "OPTIONS", "/images",
            headers: [
                "Origin": "https://app.example", "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            ])
        #expect(preflight.status == 204)
        #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example")
        #expect(preflight.header("Access-Control-Allow-Methods") == "POST, GET, HEAD, OPTIONS")
        #expect(preflight.header("Access-Control-Allow-Headers")?.contains("Authorization") == true)
        #expect(preflight.header("Access-Control-Max-Age") == "600")
        #expect(preflight.header("X-Served-By") == "test-instance")
        let wrongMethod = try service.client.send(
            "OPTIONS", "/images",
            headers: [
                "Origin": "https://app.example", "Access-Control-Request-Method": "PATCH",
            ])
        #expect(wrongMethod.header("Access-Control-Allow-Methods") == nil)
        let foreign = try service.client.send(
            "OPTIONS", "/images",
            headers: [
                "Origin": "https://evil.example", "Access-Control-Request-Method": "POST",
            ])
        #expect(foreign.status == 204)
        #expect(foreign.header("Access-Control-Allow-Origin") == nil)
        #expect(foreign.header("Access-Control-Allow-Methods") == nil)
        #expect(try service.client.send("OPTIONS", "/nowhere", headers: origin).status == 404)
    }

    @Test func aWildcardAllowsEveryOriginWithoutVary() async throws {
        let service = try TestService { $0.server.corsOrigins = ["*"] }
        defer { Task { await service.stop() } }
        let response = try service.client.get("/healthz", headers: ["Origin": "https://anyone.example"])
        #expect(response.header("Access-Control-Allow-Origin") == "*")
        #expect(response.header("Vary") == nil)
    }

    @Test func corsOriginsAreValidated() {
        #expect(CORSPolicy.isValidEntry("*"))
        #expect(CORSPolicy.isValidEntry("https://example.com"))
        #expect(CORSPolicy.isValidEntry("http://localhost:3000"))
        #expect(!CORSPolicy.isValidEntry("example.com"))
        #expect(!CORSPolicy.isValidEntry("https://example.com/"))
        #expect(!CORSPolicy.isValidEntry("ftp://example.com"))
        #expect(!CORSPolicy.isValidEntry("https://"))
        var settings = FlipbookSettings()
        settings.server.corsOrigins = ["https://ok.example", "not an origin"]
        #expect(throws: (any Error).self) { try SettingsLoader.validate(settings) }
    }
}
