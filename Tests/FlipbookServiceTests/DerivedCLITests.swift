import FlipbookTestSupport
import Foundation
import Testing

/// `flipbook preview` and `flipbook storyboard` write the bytes the service serves for the same
/// parameters.
@Suite("Derived products CLI", .serialized)
struct DerivedCLITests {
    @Test func previewAndStoryboardSheetsAreTheServicesBytes() async throws {
        let flipbook = try #require(builtProduct("flipbook"), "build the flipbook product first")
        let path = Corpus.root.appendingPathComponent(DerivedRoutesTests.path).path
        let service = try TestService()
        let id = try #require(try service.upload(Corpus.bytes(DerivedRoutesTests.path)).json["id"] as? String)
        let directory = TestService.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)

        let preview = try runProcess(
            flipbook, ["preview", path, "--width", "90", "--quality", "70", "--output", directory + "/p.webp"])
        #expect(preview.status == 0, "\(preview.stderr)")
        let served = try service.client.get("/images/\(id)/preview?width=90&quality=70")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/p.webp"))) == served.body)

        let board = try runProcess(
            flipbook,
            ["storyboard", path, "--tile", "40", "--columns", "4", "--frames", "interval=300", "--output", directory + "/sb"])
        #expect(board.status == 0, "\(board.stderr)")
        let manifest = try service.client.get("/images/\(id)/storyboard?tile=40&columns=4&frames=interval=300").json
        let sheets = try #require(manifest["sheets"] as? [[String: Any]])
        for (n, sheet) in sheets.enumerated() {
            let url = try #require(sheet["url"] as? String)
            let written = try Data(contentsOf: URL(fileURLWithPath: directory + "/sb/\(n).webp"))
            #expect(Array(written) == (try service.client.get(url).body), "sheet \(n)")
        }
        let json =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: directory + "/sb/storyboard.json"))) as? [String: Any]
        #expect((json?["tiles"] as? [Any])?.count == (manifest["tiles"] as? [Any])?.count)
        let track = try String(contentsOfFile: directory + "/sb/storyboard.vtt", encoding: .utf8)
        #expect(track.hasPrefix("WEBVTT\n\n00:00:00.000 --> ") && track.contains("0.webp#xywh=0,0,40,"))
        await service.stop()
    }
}
