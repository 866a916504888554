import AnimatedImage
import FlipbookTestSupport
import Foundation
import Testing

/// `flipbook info` and `flipbook frame` as a user runs them (the built executable): what they
/// print and write, and their exit statuses (0; 1 an image that cannot be served; 2 a file that
/// cannot be read or written).
@Suite("Command line", .ownThreads)
struct CLITests {
    @Test func infoPrintsTheMetadataOfTheFile() throws {
        let path = Corpus.root.appendingPathComponent("wuffs/muybridge.gif").path
        let result = try runProcess(flipbookExecutable(), ["info", path])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
        // Facts of the file itself (15 frames of 30×20, looping forever), not the serializer's.
        #expect(json["format"] as? String == "gif")
        #expect(json["width"] as? Int == 30 && json["height"] as? Int == 20)
        #expect(json["frameCount"] as? Int == 15)
        #expect((json["frames"] as? [Any])?.count == 15)
        #expect(json["id"] == nil)
    }

    @Test func infoExitStatuses() throws {
        let directory = NSTemporaryDirectory() + "flipbook-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: directory + "/text.gif"))
        let notImage = try runProcess(flipbookExecutable(), ["info", directory + "/text.gif"])
        #expect(notImage.status == 1)
        #expect(notImage.stderr.hasPrefix("flipbook: ") && notImage.stderr.filter { $0 == "\n" }.count == 1)
        let missing = try runProcess(flipbookExecutable(), ["info", directory + "/missing.gif"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("does not exist"))
    }

    @Test func frameWritesTheCompositedFrame() throws {
        let path = Corpus.root.appendingPathComponent("wuffs/muybridge.gif").path
        let directory = NSTemporaryDirectory() + "flipbook-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/frame.png"
        let result = try runProcess(flipbookExecutable(), ["frame", path, "14", "--output", output])
        #expect(result.status == 0, "\(result.stderr)")
        // The PNG holds the same pixels as the last frame composited in process.
        let written = try AnimatedImage(bytes: [UInt8](Data(contentsOf: URL(fileURLWithPath: output))))
        let image = try AnimatedImage(bytes: Corpus.bytes("wuffs/muybridge.gif"))
        #expect(try FrameRenderer(image: written).render(0).pixels == FrameRenderer(image: image).render(14).pixels)

        let beyond = try runProcess(flipbookExecutable(), ["frame", path, "15", "--output", directory + "/none.png"])
        #expect(beyond.status == 1)
        #expect(!FileManager.default.fileExists(atPath: directory + "/none.png"))
        let unwritable = try runProcess(flipbookExecutable(), ["frame", path, "0", "--output", directory + "/no/such/dir/f.png"])
        #expect(unwritable.status == 2)
    }
}
