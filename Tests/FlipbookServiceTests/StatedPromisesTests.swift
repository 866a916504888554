import AnimatedImage
import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// Promises of the docs that no other test states: library images are read-only (409; docs/api.md),
/// a page of `GET /images` never exceeds `storage.maxPageSize` (docs/configuration.md), and
/// `/readyz` says 503 while the data directory cannot take a file, and 200 again once it can
/// (docs/getting-started.md, docs/storage.md).
@Suite("Stated promises", .ownThreads)
struct StatedPromisesTests {
    @Test func libraryImagesCannotBeReplacedOrDeleted() async throws {
        let library = TestService.temporaryDirectory()
        let original = try Corpus.bytes("wuffs/muybridge.gif")
        try Data(original).write(to: URL(fileURLWithPath: library + "/muybridge.gif"))
        let service = try TestService { settings in
            settings.storage.libraryDirs = [library]
            settings.auth.adminToken = "admin-secret"  // deleting is an admin route
        }
        let replacement = try Corpus.bytes("pillow/gif/iss634.gif")
        #expect(try service.client.send("PUT", "/images/muybridge.gif", body: replacement).status == 409)
        let delete = try service.client.send(
            "DELETE", "/images/muybridge.gif",
            headers: ["Authorization": "Bearer admin-secret"])
        #expect(delete.status == 409)
        // Still the library's file, whole.
        let metadata = try service.client.get("/images/muybridge.gif")
        #expect(metadata.status == 200)
        #expect(metadata.json["frameCount"] as? Int == (try AnimatedImage(bytes: original)).frameCount)
        #expect(metadata.json["fileBytes"] as? Int == original.count)
        await service.stop()
    }

    @Test func pagesNeverExceedMaxPageSize() async throws {
        let service = try TestService { $0.storage.maxPageSize = 2 }
        for path in ["wuffs/muybridge.gif", "pillow/gif/iss634.gif", "wuffs/muybridge.apng"] {
            #expect(try service.upload(Corpus.bytes(path)).status == 201)
        }
        let first = try service.client.get("/images?limit=50")
        #expect(first.status == 200)
        #expect((first.json["images"] as? [Any])?.count == 2)
        let next = try #require(first.json["next"] as? String)
        let second = try service.client.get("/images?limit=50&after=\(next)")
        #expect((second.json["images"] as? [Any])?.count == 1)
        #expect(second.json["next"] == nil || second.json["next"] is NSNull)
        await service.stop()
    }

    @Test func readyzIs503WhileTheDataDirectoryTakesNoFile() async throws {
        let service = try TestService()
        #expect(try service.client.get("/readyz").status == 200)
        let temporary = service.dataDirectory + "/tmp"
        try FileManager.default.removeItem(atPath: temporary)  // where every write starts
        let down = try service.client.get("/readyz")
        #expect(down.status == 503)
        #expect(down.header("Content-Type") == "application/problem+json")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
        #expect(try service.client.get("/readyz").status == 200)
        await service.stop()
    }
}
