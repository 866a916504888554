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

        let command = CommandAndRoute(flipbook: flipbook, image: path, service: service, directory: directory)
        try command.expectSameBytes(
            ["preview", "--width", "90", "--quality", "70"], "p.webp", "/images/\(id)/preview?width=90&quality=70")
        try command.expectSameBytes(
            ["preview", "--width", "90", "--format", "avif"], "p.avif", "/images/\(id)/preview?width=90&format=avif",
            contentType: "image/avif")
        // An odd width: both make the even rendition (90 × 245/245 → 90, and 91 → 90).
        try command.expectSameBytes(
            ["preview", "--width", "91", "--format", "mp4"], "p.mp4", "/images/\(id)/preview?width=91&format=mp4",
            contentType: "video/mp4")
        try command.expectSameBytes(
            ["preview", "--width", "90", "--format", "mp4", "--background", "000"], "b.mp4",
            "/images/\(id)/preview?width=90&format=mp4&background=000000")
        try command.expectSameBytes(
            ["preview", "--width", "91", "--format", "webm"], "p.webm", "/images/\(id)/preview?width=91&format=webm",
            contentType: "video/webm")
        // An AVIF frame: the command writes the bytes the frame route serves.
        try command.expectSameBytes(
            ["frame", "3", "--width", "90", "--format", "avif"], "f.avif", "/frames/\(id)/3?width=90&format=avif",
            contentType: "image/avif")
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

/// One `flipbook` command run on the test's image and the route that serves the same product:
/// the command exits 0, the route answers 200 (with `contentType` when given), and both hold
/// the same bytes (``DerivedCLITests/expectSameBytes(_:_:)``).
struct CommandAndRoute {
    let flipbook: String
    let image: String
    let service: TestService
    let directory: String

    /// Runs `flipbook SUBCOMMAND IMAGE REST… --output DIRECTORY/output`, then GETs `route`.
    func expectSameBytes(_ arguments: [String], _ output: String, _ route: String, contentType: String? = nil) throws {
        let run = try runProcess(
            flipbook, [arguments[0], image] + arguments.dropFirst() + ["--output", directory + "/" + output])
        #expect(run.status == 0, "\(run.stderr)")
        let served = try service.client.get(route)
        #expect(served.status == 200, DerivedCLITests.described(served))
        if let contentType { #expect(served.header("Content-Type") == contentType) }
        try DerivedCLITests.expectSameBytes(directory + "/" + output, served.body)
    }
}
