import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

/// Byte ranges on kept products through the HTTP API (RFC 9110 §14): each preview format and a
/// storyboard sheet answer one range with 206 and the very bytes of the whole file, a range past
/// the end with 416, an `If-Range` other than the `ETag` and several ranges with the whole file,
/// and HEAD ignores `Range`.
@Suite("Byte ranges on previews", .serialized, .ownThreads)
struct PreviewRangeTests {
    static let path = "pillow/gif/iss634.gif"  // 245×245, 42 frames

    /// (Range, the slice of an `n`-byte file it gives; nil: the whole file with 200; 416 when the
    /// slice is empty)
    static let cases: [(String, @Sendable (Int) -> Range<Int>?)] = [
        ("bytes=0-99", { _ in 0..<100 }),
        ("bytes=100-", { n in 100..<n }),
        ("bytes=-500", { n in (n - 500)..<n }),
        ("bytes=7-7", { _ in 7..<8 }),
        ("bytes=10-99999999", { n in 10..<n }),
        ("bytes=-99999999", { n in 0..<n }),
        ("bytes=99999999-", { _ in 0..<0 }),
        ("bytes=-0", { _ in 0..<0 }),
        ("bytes=0-1,5-9", { _ in nil }),
        ("bytes=5-1", { _ in nil }),
        ("pages=1-2", { _ in nil }),
    ]

    /// Every case of ``cases`` against the product at `target`, whose whole body is `whole`.
    static func checkRanges(_ service: TestService, _ target: String, whole: [UInt8], etag: String) throws {
        let n = whole.count
        for (range, slice) in cases {
            let response = try service.client.get(target, headers: ["Range": range])
            #expect(response.header("Accept-Ranges") == "bytes", "\(range)")
            guard let bytes = slice(n) else {
                #expect(response.status == 200 && response.body == whole, "\(range): \(response.status)")
                #expect(response.header("Content-Range") == nil)
                continue
            }
            if bytes.isEmpty {
                #expect(response.status == 416, "\(range): \(response.status)")
                #expect(response.header("Content-Range") == "bytes */\(n)")
                continue
            }
            #expect(response.status == 206, "\(range): \(response.status) \(response.text.prefix(200))")
            #expect(response.header("Content-Range") == "bytes \(bytes.lowerBound)-\(bytes.upperBound - 1)/\(n)", "\(range)")
            #expect(response.header("Content-Length") == String(bytes.count))
            #expect(response.header("ETag") == etag)
            #expect(response.body == Array(whole[bytes]), "\(range)")
        }
        // If-Range: the strong ETag lets the range through; another tag, its weak form or a date
        // give the whole file.
        let matching = try service.client.get(target, headers: ["Range": "bytes=1-4", "If-Range": etag])
        #expect(matching.status == 206 && matching.body == Array(whole[1..<5]))
        for validator in ["\"other\"", "W/\(etag)", "Sun, 29 Nov 2026 07:00:00 GMT"] {
            let changed = try service.client.get(target, headers: ["Range": "bytes=1-4", "If-Range": validator])
            #expect(changed.status == 200 && changed.body == whole, "If-Range \(validator)")
        }
        // If-None-Match comes first: 304 even with a Range.
        let revalidated = try service.client.get(target, headers: ["Range": "bytes=1-4", "If-None-Match": etag])
        #expect(revalidated.status == 304)
        // HEAD ignores Range: the whole file's length, no body.
        let head = try service.client.send("HEAD", target, headers: ["Range": "bytes=1-4"])
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.header("Content-Length") == String(n) && head.header("Accept-Ranges") == "bytes")
    }

    @Test(arguments: ["webp", "avif", "webm"])
    func previewsAnswerRanges(format: String) async throws {
        try await TestService.withUpload(of: Self.path) { service, id in
            let target = "/images/\(id)/preview?width=100&format=\(format)"
            let whole = try service.client.get(target)
            #expect(whole.status == 200 && whole.header("Accept-Ranges") == "bytes", "\(whole.text.prefix(200))")
            #expect(whole.body.count > 1000)
            try Self.checkRanges(service, target, whole: whole.body, etag: try #require(whole.header("ETag")))
        }
    }

    @Test func negotiatedPreviewRangesKeepVary() async throws {
        try await TestService.withUpload(of: Self.path) { service, id in
            let target = "/images/\(id)/preview?width=64&format=auto"
            let part = try service.client.get(target, headers: ["Accept": "image/avif", "Range": "bytes=0-11"])
            #expect(part.status == 206 && part.header("Vary") == "Accept" && part.header("Content-Type") == "image/avif")
            #expect(String(decoding: part.body[4..<8], as: UTF8.self) == "ftyp")
        }
    }

    @Test func storyboardSheetsAnswerRanges() async throws {
        try await TestService.withUpload(of: Self.path) { service, id in
            let manifest = try service.client.get("/images/\(id)/storyboard?tile=64")
            #expect(manifest.status == 200, "\(manifest.text)")
            let sheets = try #require(manifest.json["sheets"] as? [[String: Any]])
            let url = try #require(sheets.first?["url"] as? String)
            let whole = try service.client.get(url)
            #expect(whole.status == 200 && whole.header("Accept-Ranges") == "bytes")
            try Self.checkRanges(service, url, whole: whole.body, etag: try #require(whole.header("ETag")))
        }
    }
}
