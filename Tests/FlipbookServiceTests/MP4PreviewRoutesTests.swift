import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// `GET /images/{id}/preview?format=mp4` through the HTTP API: an H.264 MP4 with even sides,
/// kept, revalidated and ranged like any preview, never chosen by `format=auto`, refused by an
/// `Accept` that does not take `video/mp4`, and refused before encoding above the decode budget.
@Suite("MP4 previews over HTTP", .serialized, .ownThreads)
struct MP4PreviewRoutesTests {
    static let path = "pillow/gif/iss634.gif"  // 245×245, 42 frames

    func withService(
        _ configure: (inout FlipbookSettings) -> Void = { _ in }, _ body: (TestService, String) throws -> Void
    ) async throws {
        try await TestService.withUpload(of: Self.path, configure: configure, body)
    }

    /// The width and height in the `tkhd` box (16.16 fixed point).
    static func trackSize(_ bytes: [UInt8]) -> (Int, Int)? {
        guard let tkhd = bytes.indices.dropLast(8).first(where: { bytes[$0..<$0 + 4] == Array("tkhd".utf8)[...] }) else {
            return nil
        }
        func u32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        let end = tkhd - 4 + u32(tkhd - 4)
        return (u32(end - 8) >> 16, u32(end - 4) >> 16)
    }

    @Test func anMP4PreviewIsKeptWithEvenSides() async throws {
        try await withService { service, id in
            let response = try service.client.get("/images/\(id)/preview?width=101&format=mp4")
            #expect(response.status == 200, "\(response.text.prefix(300))")
            #expect(response.header("Content-Type") == "video/mp4")
            #expect(response.header("Accept-Ranges") == "bytes" && response.header("Vary") == nil)
            #expect(String(decoding: response.body[4..<8], as: UTF8.self) == "ftyp")
            let size = try #require(Self.trackSize(response.body))
            #expect(size == (100, 100), "101 px is made 100: \(size)")
            let etag = try #require(response.header("ETag"))
            #expect(etag.contains("100x100"), "\(etag)")
            // width=100 is the same rendition: the same product, not a second build.
            let even = try service.client.get("/images/\(id)/preview?width=100&format=mp4")
            #expect(even.body == response.body && even.header("ETag") == etag)
            #expect(service.server.derived.builds.counts().started == 1)
            #expect(
                try service.client.get("/images/\(id)/preview?width=101&format=mp4", headers: ["If-None-Match": etag]).status
                    == 304)
            let part = try service.client.get("/images/\(id)/preview?width=101&format=mp4", headers: ["Range": "bytes=-100"])
            #expect(part.status == 206 && part.body == Array(response.body.suffix(100)))
            let better = try service.client.get("/images/\(id)/preview?width=101&format=mp4&quality=90")
            #expect(better.status == 200 && better.header("ETag") != etag && better.body.count > response.body.count)
        }
    }

    @Test func autoNeverChoosesVideoAndAcceptIsHonoured() async throws {
        try await withService { service, id in
            let auto = try service.client.get("/images/\(id)/preview?width=48&format=auto", headers: ["Accept": "video/mp4"])
            #expect(auto.status == 406 && auto.header("Vary") == "Accept", "\(auto.status)")
            let refused = try service.client.get("/images/\(id)/preview?width=48&format=mp4", headers: ["Accept": "image/*"])
            #expect(refused.status == 406 && refused.text.contains("video/mp4"), "\(refused.text)")
            for accept in ["video/*", "video/mp4", "*/*"] {
                let taken = try service.client.get("/images/\(id)/preview?width=48&format=mp4", headers: ["Accept": accept])
                #expect(taken.status == 200 && taken.header("Content-Type") == "video/mp4", "\(accept)")
            }
            let bad = try service.client.get("/images/\(id)/preview?format=mp5")
            #expect(bad.status == 400 && bad.text.contains("mp4"))
        }
    }

    /// `background=` names the colour transparency is composited onto: its own product and ETag
    /// (white, given or not, is one product), and a 400 naming it for a bad value, a second
    /// one, or a format that keeps transparency (the pixels: MP4PreviewTests).
    @Test func theBackgroundIsItsOwnProductAndValidated() async throws {
        try await TestService.withUpload(of: "pillow/gif/dispose_bgnd.gif") { service, id in
            let white = try service.client.get("/images/\(id)/preview?width=48&format=mp4")
            #expect(white.status == 200, "\(white.text.prefix(300))")
            let etag = try #require(white.header("ETag"))
            #expect(!etag.contains("-bg"), "\(etag)")
            for given in ["ffffff", "FFF"] {
                let same = try service.client.get("/images/\(id)/preview?width=48&format=mp4&background=\(given)")
                #expect(same.header("ETag") == etag && same.body == white.body, "\(given)")
            }
            let black = try service.client.get("/images/\(id)/preview?width=48&format=mp4&background=000000")
            #expect(black.status == 200 && black.header("Content-Type") == "video/mp4")
            let blackTag = try #require(black.header("ETag"))
            #expect(blackTag.contains("-bg000000") && black.body != white.body, "\(blackTag)")
            let short = try service.client.get("/images/\(id)/preview?width=48&format=mp4&background=000")
            #expect(short.header("ETag") == blackTag && short.body == black.body)
            #expect(service.server.derived.builds.counts().started == 2, "one build per background")
            #expect(
                try service.client.get(
                    "/images/\(id)/preview?width=48&format=mp4&background=000", headers: ["If-None-Match": blackTag]
                ).status == 304)
            for (query, says) in [
                ("format=mp4&background=%23000000", "without '#'"), ("format=mp4&background=black", "six hex digits"),
                ("format=mp4&background=00000", "six hex digits"), ("format=mp4&background=", "six hex digits"),
                ("format=mp4&background=000&background=fff", "more than once"),
                ("format=webp&background=000", "format=webp keeps transparency"),
                ("format=avif&background=000", "format=avif keeps transparency"),
                ("background=000", "negotiated image format"), ("format=auto&background=000", "negotiated image format"),
            ] {
                let refused = try service.client.get("/images/\(id)/preview?width=48&\(query)")
                #expect(refused.status == 400 && refused.text.contains("background"), "\(query): \(refused.text)")
                #expect(refused.text.contains(says), "\(query): \(refused.text)")
            }
        }
    }

    @Test func aPreviewAboveTheDecodeBudgetIsRefusedBeforeEncoding() async throws {
        try await withService({ $0.limits.decode.maxDecodeBytes = 48 << 20 }) { service, id in
            let refused = try service.client.get("/images/\(id)/preview?width=4000&enlarge=true&format=mp4")
            #expect(refused.status == 422 && refused.text.contains("limits.maxDecodeBytes"), "\(refused.text)")
            #expect(service.server.derived.counters.current.builds.isEmpty)
            let small = try service.client.get("/images/\(id)/preview?width=64&format=mp4")
            #expect(small.status == 200, "\(small.text)")
        }
    }
}
