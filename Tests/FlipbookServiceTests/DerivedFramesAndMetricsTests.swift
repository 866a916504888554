import AnimatedImage
import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// Where a build's frames come from — the frame cache's lossless frames of the same rendition
/// when it holds them, decoded otherwise — and the products' lines in `/metrics`.
@Suite("Derived products: frames and metrics", .serialized, .ownThreads)
struct DerivedFramesAndMetricsTests {
    static let path = "pillow/gif/iss634.gif"  // 245×245, 42 frames

    @Test func aPreviewTakesTheFramesTheCacheHoldsInsteadOfDecoding() async throws {
        let warm = try TestService()
        let id = try #require(try warm.upload(Corpus.bytes(Self.path)).json["id"] as? String)
        // The player's frames at the preview's size, as PNG: the cache holds all 42.
        for k in 0..<42 {
            #expect(try warm.client.get("/frames/\(id)/\(k)?width=100&format=png").status == 200)
        }
        let cache = warm.server.cache
        let key = id + "/" + FrameRendition(scaledWidth: 100, scaledHeight: 100, format: .png).key
        let held = (0..<42).filter { cache.peekFrame(id: key, index: $0) != nil }.count
        #expect(held == 42)
        let preview = try warm.client.get("/images/\(id)/preview?width=100")
        #expect(preview.status == 200)
        #expect(try warm.metric("flipbook_derived_frames_total", where: "source=\"cache\"") == 42)
        #expect(try warm.metric("flipbook_derived_frames_total", where: "source=\"decoded\"") == 0)

        // A cold service decodes every frame; the bytes are the same.
        let cold = try TestService()
        #expect(try cold.upload(Corpus.bytes(Self.path)).status == 201)
        let coldPreview = try cold.client.get("/images/\(id)/preview?width=100")
        #expect(coldPreview.body == preview.body)
        #expect(try cold.metric("flipbook_derived_frames_total", where: "source=\"cache\"") == 0)
        #expect(try cold.metric("flipbook_derived_frames_total", where: "source=\"decoded\"") == 42)
        // Lossy frames of that size are not the preview's pixels: not taken.
        for k in 0..<42 { _ = try cold.client.get("/frames/\(id)/\(k)?width=80&format=webp&quality=50") }
        #expect(try cold.client.get("/images/\(id)/preview?width=80").status == 200)
        #expect(try cold.metric("flipbook_derived_frames_total", where: "source=\"cache\"") == 0)
        await cold.stop()
        await warm.stop()
    }

    @Test func metricsCountBuildsHitsFailuresAndBytes() async throws {
        let service = try TestService { $0.derived.maxOutputBytes = 20_000 }
        let id = try #require(try service.upload(Corpus.bytes(Self.path)).json["id"] as? String)
        let first = try service.client.get("/images/\(id)/preview?width=40&quality=50")
        #expect(first.status == 200, "\(first.text)")
        #expect(try service.client.get("/images/\(id)/preview?width=40&quality=50").status == 200)
        #expect(try service.client.get("/images/\(id)/preview?width=200").status == 422)
        let manifest = try service.client.get("/images/\(id)/storyboard?tile=20&columns=7&quality=50")
        #expect(manifest.status == 200)
        #expect(try service.metric("flipbook_derived_builds_total", where: "product=\"preview\"") == 1)
        #expect(try service.metric("flipbook_derived_builds_total", where: "product=\"storyboard\"") == 1)
        #expect(try service.metric("flipbook_derived_build_seconds_total") > 0)
        #expect(try service.metric("flipbook_derived_hits_total", where: "source=\"disk\"") == 1)
        #expect(try service.metric("flipbook_derived_failures_total", where: "reason=\"limit\"") == 1)
        // The preview, the storyboard, and the seek anchors the upload left (SeekAnchorTests).
        let anchors = try SeekAnchorTests.anchors(of: Corpus.bytes(Self.path))
        #expect(anchors.count == 1)
        #expect(try service.metric("flipbook_derived_products") == 3)
        let urls = try #require(manifest.json["sheets"] as? [[String: Any]]).compactMap { $0["url"] as? String }
        let sheets = try urls.map { try service.client.get($0).body.count }.reduce(0, +)
        #expect(!urls.isEmpty && sheets > 0)
        let anchorBytes = try anchors.map { try service.client.get("/frames/\(id)/\($0)").body.count }.reduce(0, +)
        #expect(try service.metric("flipbook_derived_bytes") == Double(first.body.count + sheets + anchorBytes))
        #expect(try service.metric("flipbook_derived_evictions_total") == 0)
        await service.stop()
    }
}
