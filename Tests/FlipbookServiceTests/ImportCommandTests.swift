import FlipbookTestSupport
import Foundation
import Testing

@testable import FlipbookService

/// `flipbook import` as an operator runs it: it stores exactly the records `POST /images` stores
/// for the same bytes, refuses what the API refuses, skips what is stored already, and the images
/// are then served and listed like uploads.
@Suite("Import command")
struct ImportCommandTests {
    /// The record of `id` in `directory`, as JSON with its time of storing left out.
    static func record(_ directory: String, _ id: String) throws -> NSDictionary {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: DataLayout(dataDirectory: directory).recordPath(id)))
        let object = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        #expect(object["storedAt"] is String)
        return object.filter { $0.key != "storedAt" } as NSDictionary
    }

    @Test func anImportStoresWhatAnUploadStoresAndRefusesWhatItRefuses() async throws {
        let inputs = TestService.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: inputs + "/more", withIntermediateDirectories: true)
        var files: [(name: String, bytes: [UInt8])] = (0..<5).map { ("tiny-\($0).gif", TinyAnimations.gif(seed: UInt64($0))) }
        files.append(("more/tiny-5.gif", TinyAnimations.gif(seed: 5)))
        files.append(("apng.png", try Corpus.bytes("image-rs-image/images/png/apng/ball.png")))
        files.append(("text.gif", Array("not an image".utf8)))
        files.append(("big.gif", try Corpus.bytes("pillow/gif/iss634.gif")))  // over the limit below
        for (name, bytes) in files { try Data(bytes).write(to: URL(fileURLWithPath: inputs + "/" + name)) }
        try Data(TinyAnimations.gif(seed: 6)).write(to: URL(fileURLWithPath: inputs + "/.hidden.gif"))
        let limit = 100_000
        #expect(files[6].bytes.count < limit && files[8].bytes.count > limit)

        let imported = TestService.temporaryDirectory()
        let arguments = [
            "import", "--data-dir", imported, "--set", "server.maxUploadBytes=\(limit)",
            "--json", "--jobs", "3", inputs,
        ]
        let run = try runProcess(CLITests.flipbook(), arguments)
        #expect(run.status == 1, "a file was refused: \(run.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any])
        #expect(summary["files"] as? Int == 9 && summary["stored"] as? Int == 7 && summary["refused"] as? Int == 2)
        #expect(run.stderr.contains("text.gif") && run.stderr.contains("big.gif"), "\(run.stderr)")

        // The same bytes through the API.
        let uploaded = try TestService { $0.server.maxUploadBytes = limit }
        var ids: [String] = []
        for (name, bytes) in files {
            let response = try uploaded.upload(bytes)
            switch name {
            case "text.gif": #expect(response.status == 415)
            case "big.gif": #expect(response.status == 413)
            default:
                #expect(response.status == 201)
                ids.append(try #require(response.json["id"] as? String))
            }
        }
        for id in ids {
            #expect(try Self.record(imported, id) == Self.record(uploaded.dataDirectory, id), "\(id)")
        }

        // Served and listed like uploads; a second import finds them stored.
        let serving = try TestService(dataDirectory: imported)
        let listed = try #require(try serving.client.get("/images?limit=100").json["images"] as? [[String: Any]])
        #expect(Set(listed.compactMap { $0["id"] as? String }) == Set(ids))
        for id in ids {
            #expect(try serving.client.get("/frames/\(id)/1").body == uploaded.client.get("/frames/\(id)/1").body)
        }
        let again = try runProcess(CLITests.flipbook(), arguments)
        let second = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout)) as? [String: Any])
        #expect(second["stored"] as? Int == 0 && second["existing"] as? Int == 7)
        await serving.stop()
        await uploaded.stop()
    }
}
