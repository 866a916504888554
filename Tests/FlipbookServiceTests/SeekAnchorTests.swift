import AnimatedImage
import FlipbookTestSupport
import Foundation
import FrameCache
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// An upload's verification leaves full-size frames to seek from in the frame cache (every
/// ``SeekAnchors/interval``-th frame), so the first request far into a new image replays a few
/// frames, not all before it — and every frame served is the same bytes as without them.
@Suite("Seek anchors made while an upload is verified", .ownThreads)
struct SeekAnchorTests {
    /// 128 frames, 128×64 (the only corpus input with more than 40 frames).
    static let input = "pillow/apng/blend_op_over_near_transparent.png"

    static func stats(_ service: TestService) throws -> [String: Any] {
        try service.client.get("/stats").json
    }

    /// What the service serves for frame `index` without the cache: rendered from frame 0.
    static func expected(_ image: AnimatedImage, _ index: Int) throws -> [UInt8] {
        let rendition = FrameRendition.exact(width: image.canvasWidth, height: image.canvasHeight)
        let encoder = RenditionEncoder(png: PNGEncoder(compressionLevel: FlipbookSettings().cache.pngCompressionLevel))
        return try encoder.encode(FrameRenderer(image: image).render(index), as: rendition, colorSpace: image.colorSpace)
    }

    /// The frames an upload of `bytes` leaves cached (at full size) when it is verified.
    static func anchors(of bytes: [UInt8]) throws -> [Int] {
        let image = try AnimatedImage(bytes: bytes)
        guard image.frameCount > SeekAnchors.interval else { return [] }
        return (1..<image.frameCount).filter {
            $0 % SeekAnchors.interval == 0 && image.index.frames[$0].disposal != .previous
        }
    }

    @Test func aFrameFarIntoANewUploadResumesFromTheNearestAnchor() async throws {
        let service = try TestService()
        let bytes = try Corpus.bytes(Self.input)
        let image = try AnimatedImage(bytes: bytes)
        #expect(image.frameCount == 128)
        let anchors = try Self.anchors(of: bytes)
        #expect(!anchors.isEmpty)

        let uploaded = try service.upload(bytes)
        #expect(uploaded.status == 201)
        let id = try #require(uploaded.json["id"] as? String)
        let residency = try service.client.get("/images/\(id)/cache").json
        #expect(residency["cachedFrames"] as? [Int] == anchors)

        // The first request, past the last anchor, resumes from it: its canvas comes from the
        // anchor's PNG, not from replaying every frame before it. (Decoding ahead after it
        // continues from the frame it drew, so it resumes nothing more.)
        let target = anchors.last! + 3
        let before = try Self.stats(service)
        let frame = try service.client.get("/frames/\(id)/\(target)")
        let expected = try Self.expected(image, target)
        #expect(frame.status == 200 && frame.body == expected)
        let after = try Self.stats(service)
        #expect((after["resumes"] as? Int ?? -1) == (before["resumes"] as? Int ?? 0) + 1)
        // The anchors are the frames the routes serve, byte for byte.
        for k in anchors {
            let expected = try Self.expected(image, k)
            #expect(try service.client.get("/frames/\(id)/\(k)").body == expected, "frame \(k)")
        }
        await service.stop()
    }

    @Test func aShortImageHasNoAnchors() async throws {
        let service = try TestService()
        let uploaded = try service.upload(Corpus.bytes(UploadSessionTests.gif))
        let id = try #require(uploaded.json["id"] as? String)
        #expect(try service.client.get("/images/\(id)/cache").json["cachedFrames"] as? [Int] == [])
        await service.stop()
    }
}

/// The anchors are kept on disk with the image's products: after a restart the cache holds
/// none, and the first request far into the image resumes from the nearest one on disk.
@Suite("Seek anchors kept across a restart", .ownThreads)
struct KeptSeekAnchorTests {
    @Test func aRestartedServiceResumesFromTheAnchorsOnDisk() async throws {
        let bytes = try Corpus.bytes(SeekAnchorTests.input)
        let image = try AnimatedImage(bytes: bytes)
        let anchors = try SeekAnchorTests.anchors(of: bytes)
        let first = try TestService()
        let uploaded = try first.upload(bytes)
        let id = try #require(uploaded.json["id"] as? String)
        await first.stop()

        let service = try TestService(dataDirectory: first.dataDirectory) { $0.auth.adminToken = "secret" }
        #expect(try service.client.get("/images/\(id)/cache").json["cachedFrames"] as? [Int] == [])
        let target = anchors.last! + 3
        let frame = try service.client.get("/frames/\(id)/\(target)")
        let expected = try SeekAnchorTests.expected(image, target)
        #expect(frame.status == 200 && frame.body == expected)
        #expect(try SeekAnchorTests.stats(service)["resumes"] as? Int == 1)

        // Deleting the image deletes them.
        let kept = first.dataDirectory + "/derived/" + id
        #expect(FileManager.default.fileExists(atPath: kept))
        let deleted = try service.client.send("DELETE", "/images/\(id)", headers: ["Authorization": "Bearer secret"])
        #expect(deleted.status == 204)
        #expect(!FileManager.default.fileExists(atPath: kept))
        await service.stop()
    }
}

/// What one upload's anchors may cost is bounded: none for huge canvases, and no more than
/// ``SeekAnchors/maxBytes`` held until the upload is stored.
@Suite("Seek anchors are bounded", .ownThreads)
struct SeekAnchorBoundTests {
    static func visitAll(_ anchors: SeekAnchors) throws {
        let image = try AnimatedImage(bytes: Corpus.bytes(SeekAnchorTests.input), verification: .structural)
        _ = try image.verifyingFrames { anchors.visit(image, $0, $1) }
    }

    @Test func limitsDecideWhatIsKept() throws {
        let cache = FrameCache(configuration: FrameCacheConfiguration(budgetBytes: 16 << 20, decodeThreads: 1))
        let all = SeekAnchors(cache: cache)
        try Self.visitAll(all)
        let sizes = all.frames.map(\.png.count)
        #expect(all.frames.map(\.index) == (try SeekAnchorTests.anchors(of: Corpus.bytes(SeekAnchorTests.input))))
        #expect(sizes.count >= 2)
        all.discard()

        // 128×64: a canvas of 32,768 bytes.
        let huge = SeekAnchors(cache: cache, maxCanvasBytes: 128 * 64 * 4 - 1)
        try Self.visitAll(huge)
        #expect(huge.frames.isEmpty)

        // Room for the first anchor only.
        let bounded = SeekAnchors(cache: cache, maxBytes: sizes[0] + sizes[1] - 1)
        try Self.visitAll(bounded)
        #expect(bounded.frames.map(\.png.count).reduce(0, +) < sizes[0] + sizes[1])
        #expect(bounded.frames.first?.index == all.frames.first?.index)
        bounded.discard()
        huge.discard()
    }
}
