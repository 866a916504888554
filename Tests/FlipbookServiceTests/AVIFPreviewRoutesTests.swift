import AnimatedImage
import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// `GET /images/{id}/preview?format=avif|auto` through the HTTP API: an AV1 image sequence whose
/// sample table holds the delay table, kept and revalidated like a WebP preview, chosen by
/// `Accept` under `format=auto` or without `format` (with `Vary: Accept`), and refused before encoding when making it
/// would need more than the decode-memory budget.
@Suite("AVIF previews over HTTP", .serialized, .ownThreads)
struct AVIFPreviewRoutesTests {
    static let path = "pillow/gif/iss634.gif"  // 245×245, 42 frames

    func withService(
        _ configure: (inout FlipbookSettings) -> Void = { _ in }, _ body: (TestService, String) throws -> Void
    ) async throws {
        try await TestService.withUpload(of: Self.path, configure: configure, body)
    }

    /// The `ftyp` brands and the first track's sample durations of an AVIF sequence.
    static func brandsAndDurations(_ bytes: [UInt8]) -> (brands: String, durations: [Int]) {
        let text = String(decoding: bytes.prefix(64), as: UTF8.self)
        guard let stts = bytes.indices.dropLast(8).first(where: { bytes[$0..<$0 + 4] == Array("stts".utf8)[...] }) else {
            return (text, [])
        }
        func u32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        var durations: [Int] = []
        for entry in 0..<u32(stts + 8) {
            let at = stts + 12 + entry * 8
            durations += Array(repeating: u32(at + 4), count: u32(at))
        }
        return (text, durations)
    }

    @Test func anAVIFPreviewHasTheDelayTableAndIsKept() async throws {
        try await withService { service, id in
            let response = try service.client.get("/images/\(id)/preview?width=100&format=avif")
            #expect(response.status == 200, "\(response.text)")
            #expect(response.header("Content-Type") == "image/avif")
            #expect(response.header("Vary") == nil)
            let (brands, durations) = Self.brandsAndDurations(response.body)
            #expect(brands.contains("avis"))
            let original = try AnimatedImage(bytes: Corpus.bytes(Self.path))
            #expect(durations == original.timeline.delaysMs)
            let etag = try #require(response.header("ETag"))
            let webp = try service.client.get("/images/\(id)/preview?width=100")
            #expect(webp.header("Content-Type") == "image/webp" && webp.header("ETag") != etag)
            #expect(
                try service.client.get("/images/\(id)/preview?width=100&format=avif", headers: ["If-None-Match": etag]).status
                    == 304)
            let again = try service.client.get("/images/\(id)/preview?width=100&format=avif")
            #expect(again.body == response.body)
            #expect(service.server.derived.builds.counts().started == 2, "one AVIF build, one WebP build")
            let better = try service.client.get("/images/\(id)/preview?width=100&format=avif&quality=90")
            #expect(better.status == 200 && better.header("ETag") != etag && better.body.count > response.body.count)
        }
    }

    @Test(
        arguments: [
            // (Accept, the format auto gives; nil: 406)
            ("image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8", "image/avif"),  // Chromium
            ("image/webp,*/*", "image/webp"),
            ("*/*", "image/webp"),
            ("image/avif;q=0.5, image/webp", "image/webp"),
            ("image/avif, image/webp;q=0", "image/avif"),
            ("image/avif", "image/avif"),
            ("image/png", nil),
        ] as [(String, String?)])
    func autoNegotiatesByAccept(accept: String, expected: String?) async throws {
        try await withService { service, id in
            // `format=auto` and no `format` are one rule, and one product per format chosen.
            for query in ["width=48&format=auto", "width=48"] {
                let response = try service.client.get("/images/\(id)/preview?\(query)", headers: ["Accept": accept])
                #expect(response.status == (expected == nil ? 406 : 200), "\(query), \(accept): \(response.text)")
                #expect(response.header("Vary") == "Accept", "\(query), \(accept)")
                if let expected { #expect(response.header("Content-Type") == expected, "\(query), \(accept)") }
            }
            #expect(service.server.derived.builds.counts().started == (expected == nil ? 0 : 1))
        }
    }

    /// Without `Accept` (which takes anything) and without `format`, a preview is the animated
    /// WebP previews were before AVIF, still negotiated (`Vary: Accept`); a video is never chosen.
    @Test func noFormatAndNoAcceptIsWebPWithVary() async throws {
        try await withService { service, id in
            let response = try service.client.get("/images/\(id)/preview?width=48")
            #expect(response.status == 200 && response.header("Content-Type") == "image/webp", "\(response.text)")
            #expect(response.header("Vary") == "Accept")
            let videoOnly = try service.client.get("/images/\(id)/preview?width=48", headers: ["Accept": "video/mp4"])
            #expect(videoOnly.status == 406 && videoOnly.header("Vary") == "Accept", "\(videoOnly.text)")
            #expect(videoOnly.text.contains("image/avif") && videoOnly.text.contains("image/webp"))
        }
    }

    @Test func refusals() async throws {
        try await withService { service, id in
            let notAcceptable = try service.client.get(
                "/images/\(id)/preview?format=avif", headers: ["Accept": "image/webp, image/avif;q=0"])
            #expect(notAcceptable.status == 406 && notAcceptable.text.contains("image/avif"))
            for query in ["format=gif", "format=avif&format=webp", "format=AVIF"] {
                let refused = try service.client.get("/images/\(id)/preview?\(query)")
                #expect(refused.status == 400 && refused.text.contains("format"), "\(query): \(refused.text)")
            }
        }
    }

    /// A preview whose encoder would need more than the budget is refused with 422 naming the
    /// limit, before a frame is decoded or encoded; a smaller one of the same image is made.
    @Test func aPreviewAboveTheDecodeBudgetIsRefusedBeforeEncoding() async throws {
        try await withService({ $0.limits.decode.maxDecodeBytes = 48 << 20 }) { service, id in
            let before = service.server.derived.stats().products
            let refused = try service.client.get("/images/\(id)/preview?width=4000&enlarge=true&format=avif")
            #expect(refused.status == 422 && refused.text.contains("limits.maxDecodeBytes"), "\(refused.text)")
            #expect(service.server.derived.stats().products == before)
            #expect(service.server.derived.counters.current.builds.isEmpty)
            let small = try service.client.get("/images/\(id)/preview?width=64&format=avif")
            #expect(small.status == 200, "\(small.text)")
        }
    }
}
