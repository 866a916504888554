import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService
@testable import ImageStorage

/// Previews and storyboards on `storage.backend = s3`: a product one replica built is kept in the
/// bucket under `derived/`, and a replica with an empty data directory serves it from there
/// without building it; deleting the image removes them from the bucket.
@Suite("S3 derived products", .serialized, .ownThreads)
struct S3DerivedProductsTests {
    static func derivedKeys(_ service: TestService, _ sha256: String) throws -> [String] {
        let backend = try #require(service.server.store.backend as? S3Backend)
        return try backend.listKeys(prefix: backend.layout.derivedProducts(sha256), startAfter: nil, count: 1000)
    }

    @Test func aReplicaServesWhatAnotherBuiltWithoutBuildingIt() async throws {
        let builder = try TestService(backend: .s3) { $0.auth.adminToken = "t" }
        let id = try #require(try builder.upload(Corpus.bytes("pillow/gif/iss634.gif")).json["id"] as? String)
        let preview = try builder.client.get("/images/\(id)/preview?width=64&quality=70")
        #expect(preview.status == 200, "\(preview.text)")
        let manifest = try builder.client.get("/images/\(id)/storyboard?tile=40&columns=4")
        #expect(manifest.status == 200, "\(manifest.text)")
        let sheets = try #require(manifest.json["sheets"] as? [[String: Any]]).compactMap { $0["url"] as? String }
        #expect(sheets.count == 1)
        let keys = try Self.derivedKeys(builder, id)
        #expect(keys.contains { $0.hasSuffix(".webp") && $0.contains("/preview-") }, "\(keys)")
        #expect(keys.contains { $0.hasSuffix("/files") } && keys.contains { $0.hasSuffix("/0.webp") }, "\(keys)")

        // A replica with nothing local: the products come from the bucket, byte for byte.
        let replica = try TestService(backend: .s3, bucket: builder.bucket)
        let again = try replica.client.get("/images/\(id)/preview?width=64&quality=70")
        #expect(again.status == 200 && again.body == preview.body)
        let manifestAgain = try replica.client.get("/images/\(id)/storyboard?tile=40&columns=4")
        #expect(manifestAgain.status == 200 && manifestAgain.body == manifest.body)
        #expect(try replica.metric("flipbook_derived_builds_total") == 0)
        #expect(try replica.metric("flipbook_derived_hits_total", where: "source=\"shared\"") == 2)
        // Served from its own disk from now on.
        #expect(try replica.client.get("/images/\(id)/preview?width=64&quality=70").body == preview.body)
        #expect(try replica.metric("flipbook_derived_hits_total", where: "source=\"disk\"") == 1)

        // A sheet asked of a replica that never saw the manifest (the load balancer's choice).
        let third = try TestService(backend: .s3, bucket: builder.bucket)
        let sheet = try third.client.get(sheets[0])
        let original = try builder.client.get(sheets[0])
        #expect(sheet.status == 200 && sheet.body == original.body)
        #expect(try third.metric("flipbook_derived_builds_total") == 0)
        let unknown = sheets[0].replacingOccurrences(of: "t40x40", with: "t41x41")
        #expect(try third.client.get(unknown).status == 404)

        // Deleting the image removes its products from the bucket too.
        #expect(try builder.client.send("DELETE", "/images/\(id)", headers: ["Authorization": "Bearer t"]).status == 204)
        #expect(try Self.derivedKeys(builder, id).isEmpty)
        await third.stop()
        await replica.stop()
        await builder.stop()
    }
}
