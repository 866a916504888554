import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// `GET /images/{id}/preview?format=webm` through the HTTP API: a VP9 WebM in the rendition's own
/// (odd) size, built once and kept, revalidated like any preview (its ranges: PreviewRangeTests), never
/// chosen by `format=auto`, refused by an `Accept` that does not take `video/webm`, with no
/// `background` (it keeps transparency), and refused before encoding above the decode budget.
@Suite("WebM previews over HTTP", .serialized, .ownThreads)
struct WebMPreviewRoutesTests {
    static let path = "pillow/gif/iss634.gif"  // 245×245, 42 frames

    @Test func aWebMPreviewIsKeptAndNegotiated() async throws {
        try await TestService.withUpload(of: Self.path) { service, id in
            let target = "/images/\(id)/preview?width=101&format=webm"
            let responses = try (0..<3).map { _ in try service.client.get(target) }
            let response = responses[0]
            #expect(response.status == 200, "\(response.text.prefix(300))")
            #expect(response.header("Content-Type") == "video/webm")
            #expect(response.header("Accept-Ranges") == "bytes" && response.header("Vary") == nil)
            #expect(Array(response.body.prefix(4)) == [0x1A, 0x45, 0xDF, 0xA3], "an EBML header")
            #expect(responses.allSatisfy { $0.body == response.body })
            #expect(service.server.derived.builds.counts().started == 1)
            let etag = try #require(response.header("ETag"))
            #expect(etag.contains("101x101") && etag.hasSuffix("-v1\""), "VP9 takes odd sides: \(etag)")
            #expect(try service.client.get(target, headers: ["If-None-Match": etag]).status == 304)
            let better = try service.client.get(target + "&quality=90")
            #expect(better.status == 200 && better.header("ETag") != etag && better.body.count > response.body.count)

            let auto = try service.client.get("/images/\(id)/preview?width=48&format=auto", headers: ["Accept": "video/webm"])
            #expect(auto.status == 406 && auto.header("Vary") == "Accept", "\(auto.status)")
            let refused = try service.client.get(target, headers: ["Accept": "video/mp4"])
            #expect(refused.status == 406 && refused.text.contains("video/webm"), "\(refused.text)")
            for accept in ["video/*", "video/webm", "*/*"] {
                let taken = try service.client.get(target, headers: ["Accept": accept])
                #expect(taken.status == 200 && taken.header("Content-Type") == "video/webm", "\(accept)")
            }
            let background = try service.client.get(target + "&background=000")
            #expect(background.status == 400 && background.text.contains("format=webm keeps transparency"), "\(background.text)")
            let bad = try service.client.get("/images/\(id)/preview?format=webn")
            #expect(bad.status == 400 && bad.text.contains("webm"))
        }
    }

    @Test func aPreviewAboveTheDecodeBudgetIsRefusedBeforeEncoding() async throws {
        try await TestService.withUpload(of: Self.path, configure: { $0.limits.decode.maxDecodeBytes = 48 << 20 }) {
            service, id in
            let refused = try service.client.get("/images/\(id)/preview?width=4000&enlarge=true&format=webm")
            #expect(refused.status == 422 && refused.text.contains("limits.maxDecodeBytes"), "\(refused.text)")
            #expect(service.server.derived.counters.current.builds.isEmpty)
        }
    }
}
