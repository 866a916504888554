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

    /// README.md's row for docs/cli.md and the usage lines of docs/cli.md name every command
    /// `flipbook --help` lists, and no other.
    @Test func theDocsNameEveryCommandThereIs() throws {
        let help = try runProcess(flipbookExecutable(), ["--help"])
        #expect(help.status == 0, "\(help.stderr)")
        // The lines after "SUBCOMMANDS:" up to a blank line; a name stands two spaces in (an
        // abstract continued on the next line stands further in).
        let listed = String(decoding: help.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .drop { !$0.hasPrefix("SUBCOMMANDS:") }.dropFirst().prefix { !$0.isEmpty }
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
        let commands = Set(listed).subtracting(["help"])
        #expect(commands.isSuperset(of: ["serve", "frame", "settings"]), "flipbook --help lists \(commands.sorted())")

        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        let row = try #require(readme.split(separator: "\n").first { $0.hasPrefix("| [cli.md](docs/cli.md) |") })
        let inReadme = Set(row.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
            .subtracting(["flipbook"])
        #expect(inReadme == commands, "README.md's cli.md row names \(inReadme.sorted())")

        let page = try String(contentsOf: repository.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        let used = Set(
            page.split(separator: "\n").filter { $0.hasPrefix("flipbook ") }.map { String($0.split(separator: " ")[1]) })
        #expect(used == commands, "docs/cli.md's usage lines name \(used.sorted())")
    }
}
