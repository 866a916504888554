import AnimatedImage
import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

/// `flipbook preview` (WebP, AVIF, MP4 and WebM) and `flipbook storyboard` write the bytes the service serves
/// for the same parameters.
@Suite("Derived products CLI", .serialized, .ownThreads)
struct DerivedCLITests {
    /// The image DerivedRoutesTests serves: 245×245, 42 frames.
    static let path = "pillow/gif/iss634.gif"

    /// Expects the file at `path` (the command's) to hold `served`; when it does not, keeps both
    /// in a directory of the temporary directory that outlives the test's scratch, and says where.
    static func expectSameBytes(_ path: String, _ served: [UInt8]) throws {
        let written = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        guard written != served else { return }
        let kept = FileManager.default.temporaryDirectory.appendingPathComponent("flipbook-mismatch-\(UUID())")
        try FileManager.default.createDirectory(at: kept, withIntermediateDirectories: true)
        let name = URL(fileURLWithPath: path).lastPathComponent
        try Data(written).write(to: kept.appendingPathComponent("written-" + name))
        try Data(served).write(to: kept.appendingPathComponent("served-" + name))
        Issue.record("\(name): \(written.count) bytes written, \(served.count) served; both kept in \(kept.path)")
    }

    /// A response's status and the start of its body, for an expectation's message.
    static func described(_ response: HTTPTestResponse) -> Comment {
        "\(response.status) \(String(decoding: response.body.prefix(300), as: UTF8.self))"
    }

    @Test func previewAndStoryboardSheetsAreTheServicesBytes() async throws {
        let flipbook = try #require(builtProduct("flipbook"), "build the flipbook product first")
        let path = Corpus.root.appendingPathComponent(Self.path).path
        let service = try TestService()
        let id = try #require(try service.upload(Corpus.bytes(Self.path)).json["id"] as? String)
        let directory = TestService.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)

        let preview = try runProcess(
            flipbook, ["preview", path, "--width", "90", "--quality", "70", "--output", directory + "/p.webp"])
        #expect(preview.status == 0, "\(preview.stderr)")
        let served = try service.client.get("/images/\(id)/preview?width=90&quality=70")
        #expect(served.status == 200, Self.described(served))
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/p.webp"))) == served.body)
        let avif = try runProcess(
            flipbook, ["preview", path, "--width", "90", "--format", "avif", "--output", directory + "/p.avif"])
        #expect(avif.status == 0, "\(avif.stderr)")
        let servedAVIF = try service.client.get("/images/\(id)/preview?width=90&format=avif")
        #expect(servedAVIF.status == 200, Self.described(servedAVIF))
        #expect(servedAVIF.header("Content-Type") == "image/avif")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/p.avif"))) == servedAVIF.body)
        // An odd width: both make the even rendition (90 × 245/245 → 90, and 91 → 90).
        let mp4 = try runProcess(
            flipbook, ["preview", path, "--width", "91", "--format", "mp4", "--output", directory + "/p.mp4"])
        #expect(mp4.status == 0, "\(mp4.stderr)")
        let servedMP4 = try service.client.get("/images/\(id)/preview?width=91&format=mp4")
        #expect(servedMP4.status == 200, Self.described(servedMP4))
        #expect(servedMP4.header("Content-Type") == "video/mp4")
        try Self.expectSameBytes(directory + "/p.mp4", servedMP4.body)
        let onBlack = try runProcess(
            flipbook,
            ["preview", path, "--width", "90", "--format", "mp4", "--background", "000", "--output", directory + "/b.mp4"])
        #expect(onBlack.status == 0, "\(onBlack.stderr)")
        let servedOnBlack = try service.client.get("/images/\(id)/preview?width=90&format=mp4&background=000000")
        #expect(servedOnBlack.status == 200, Self.described(servedOnBlack))
        try Self.expectSameBytes(directory + "/b.mp4", servedOnBlack.body)
        let webm = try runProcess(
            flipbook, ["preview", path, "--width", "91", "--format", "webm", "--output", directory + "/p.webm"])
        #expect(webm.status == 0, "\(webm.stderr)")
        let servedWebM = try service.client.get("/images/\(id)/preview?width=91&format=webm")
        #expect(servedWebM.status == 200, Self.described(servedWebM))
        #expect(servedWebM.header("Content-Type") == "video/webm")
        try Self.expectSameBytes(directory + "/p.webm", servedWebM.body)
        // An AVIF frame: the command writes the bytes the frame route serves.
        let frame = try runProcess(
            flipbook, ["frame", path, "3", "--width", "90", "--format", "avif", "--output", directory + "/f.avif"])
        #expect(frame.status == 0, "\(frame.stderr)")
        let servedFrame = try service.client.get("/frames/\(id)/3?width=90&format=avif")
        #expect(servedFrame.status == 200, Self.described(servedFrame))
        #expect(servedFrame.header("Content-Type") == "image/avif")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/f.avif"))) == servedFrame.body)
        let badBackground = try runProcess(
            flipbook, ["preview", path, "--format", "webp", "--background", "000", "--output", directory + "/b.webp"])
        #expect(badBackground.status != 0 && badBackground.stderr.contains("background"), "\(badBackground.stderr)")
        let auto = try runProcess(flipbook, ["preview", path, "--format", "auto", "--output", directory + "/p.x"])
        #expect(auto.status != 0 && auto.stderr.contains("--format"), "\(auto.stderr)")

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

    /// A frame that does not decode ends the image before it, in the service's upload and in
    /// the command line's preview alike (which indexes the file, then starts again with the full
    /// verification when rendering meets the damage): the same bytes, the shorter timeline.
    @Test func aDamagedFrameEndsThePreviewWhereTheServiceEndsTheImage() async throws {
        let flipbook = try #require(builtProduct("flipbook"), "build the flipbook product first")
        let bytes = try Corpus.bytes("wuffs/muybridge.gif")
        let found = DamagedCopies.of(bytes, count: 80, seed: 5, in: bytes.count / 2..<bytes.count * 5 / 6, length: 48)
            .lazy.map(\.1).first { damaged in
                guard let indexed = try? AnimatedImage(bytes: damaged, verification: .structural),
                    let verified = try? AnimatedImage(bytes: damaged)
                else { return false }
                return verified.frameCount >= 2 && verified.frameCount < indexed.frameCount
            }
        let damaged = try #require(found, "no damage ended the image early")
        let expectedFrames = try AnimatedImage(bytes: damaged).frameCount
        let directory = TestService.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/damaged.gif"
        try Data(damaged).write(to: URL(fileURLWithPath: path))
        let service = try TestService()
        let id = try #require(try service.upload(damaged).json["id"] as? String)
        for quality in ["70", nil] {
            let output = directory + "/p\(quality ?? "").webp"
            let arguments = ["preview", path, "--width", "60", "--output", output] + (quality.map { ["--quality", $0] } ?? [])
            let preview = try runProcess(flipbook, arguments)
            #expect(preview.status == 0, "\(preview.stderr)")
            let written = Array(try Data(contentsOf: URL(fileURLWithPath: output)))
            let served = try service.client.get("/images/\(id)/preview?width=60" + (quality.map { "&quality=\($0)" } ?? ""))
            #expect(written == served.body)
            #expect(try AnimatedImage(bytes: written).frameCount == expectedFrames)
        }
        await service.stop()
    }
}
