import FlipbookTestSupport
import Foundation
import Glibc
import ServiceTestSupport
import Testing

@testable import FlipbookService
@testable import ImageStorage

/// `flipbook import` as an operator runs it: it stores exactly the records `POST /images` stores
/// for the same bytes and adds them to the listing index, refuses what the API refuses with the
/// API's status and detail, skips what is stored already, and a kill at any moment leaves every
/// stored image whole and listed (the next import finishes the job).
@Suite("Import command", .ownThreads)
struct ImportCommandTests {
    /// The record of `id` in `directory`, as JSON with its time of storing left out.
    static func record(_ directory: String, _ id: String) throws -> NSDictionary {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: DataLayout(dataDirectory: directory).recordPath(id)))
        let object = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        #expect(object["storedAt"] is String)
        return object.filter { $0.key != "storedAt" } as NSDictionary
    }

    /// The ids in the listing index of `directory`, read from its database (no server started, so
    /// nothing is rebuilt).
    static func indexedIDs(_ directory: String) throws -> Set<String> {
        let current = try String(contentsOfFile: directory + "/index/CURRENT", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let database = try SQLiteDatabase(path: directory + "/index/" + current, create: false)
        var ids: Set<String> = []
        try database.run("SELECT id FROM ids") { ids.insert($0.text(0)) }
        return ids
    }

    /// The ids that have a record in `directory`.
    static func recordedIDs(_ directory: String) throws -> Set<String> {
        var ids: Set<String> = []
        try DataLayout(dataDirectory: directory).enumerateStoredIDs { ids.insert($0) }
        return ids
    }

    static func summary(_ run: ProcessResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any], "\(run.stderr)")
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
        let run = try runProcess(flipbookExecutable(), arguments)
        #expect(run.status == 1, "a file was refused: \(run.stderr)")
        let summary = try Self.summary(run)
        #expect(summary["files"] as? Int == 9 && summary["stored"] as? Int == 7 && summary["refused"] as? Int == 2)

        // The same bytes through the API: the same refusals, the same records.
        let uploaded = try TestService { $0.server.maxUploadBytes = limit }
        var ids: [String] = []
        for (name, bytes) in files {
            let response = try uploaded.upload(bytes)
            switch name {
            case "text.gif", "big.gif":
                #expect(response.status == (name == "text.gif" ? 415 : 413))
                let detail = try #require(response.json["detail"] as? String)
                let line = "\(inputs)/\(name): refused (\(response.status)): \(detail)\n"
                #expect(run.stderr.contains(line), "expected \(line) in \(run.stderr)")
            default:
                #expect(response.status == 201)
                ids.append(try #require(response.json["id"] as? String))
            }
        }
        for id in ids {
            #expect(try Self.record(imported, id) == Self.record(uploaded.dataDirectory, id), "\(id)")
        }
        #expect(try Self.indexedIDs(imported) == Set(ids), "the import added its images to the listing index")

        // Served and listed like uploads; a second import finds them stored.
        let serving = try TestService(dataDirectory: imported)
        let listed = try #require(try serving.client.get("/images?limit=100").json["images"] as? [[String: Any]])
        #expect(Set(listed.compactMap { $0["id"] as? String }) == Set(ids))
        for id in ids {
            #expect(try serving.client.get("/frames/\(id)/1").body == uploaded.client.get("/frames/\(id)/1").body)
        }
        let again = try Self.summary(try runProcess(flipbookExecutable(), arguments))
        #expect(again["stored"] as? Int == 0 && again["existing"] as? Int == 7)
        await serving.stop()
        await uploaded.stop()
    }

    /// SIGKILL in the middle of an import, at moments that fall inside batches (small batches:
    /// many of them): every image with a record has its whole original (its bytes hash to its id)
    /// and is in the listing index (an id may be indexed without a record: listing skips it); a
    /// server started on the directory then lists exactly the images with records, and the next
    /// import stores the rest.
    @Test func anImportKilledMidwayLeavesEveryStoredImageWholeAndListed() async throws {
        let inputs = TestService.temporaryDirectory()
        let count = 600
        for seed in 0..<count {
            try Data(TinyAnimations.gif(seed: UInt64(1000 + seed))).write(to: URL(fileURLWithPath: inputs + "/\(seed).gif"))
        }
        let directory = TestService.temporaryDirectory()
        let arguments = ["import", "--data-dir", directory, "--json", "--jobs", "2", "--batch", "16", inputs]
        let layout = DataLayout(dataDirectory: directory)
        for killAfter in [1, 90, 250, 400] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try flipbookExecutable())
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(300)
            while process.isRunning, (try? Self.recordedIDs(directory).count) ?? 0 < killAfter, Date() < deadline {
                usleep(1000)
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let recorded = try Self.recordedIDs(directory)
            let indexed = try Self.indexedIDs(directory)
            #expect(recorded.count >= killAfter && recorded.count < count, "killed midway: \(recorded.count) stored")
            #expect(recorded.isSubset(of: indexed), "every stored image is listed")
            for id in recorded {
                let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: layout.imagePath(id))))
                #expect(ContentHash.sha256Hex(original) == id, "\(id) has its whole original")
            }
        }
        // A server lists exactly the images with records (the ids a kill left without one skipped).
        let recorded = try Self.recordedIDs(directory)
        let serving = try TestService(dataDirectory: directory)
        var listed: [String] = []
        var cursor = ""
        while true {
            let page = try serving.client.get("/images?limit=100" + (cursor.isEmpty ? "" : "&after=\(cursor)")).json
            listed += try #require(page["images"] as? [[String: Any]]).compactMap { $0["id"] as? String }
            guard let next = page["next"] as? String else { break }
            cursor = next
        }
        #expect(Set(listed) == recorded && listed.count == recorded.count)
        await serving.stop()

        let finished = try runProcess(flipbookExecutable(), arguments)
        #expect(finished.status == 0, "\(finished.stderr)")
        let summary = try Self.summary(finished)
        #expect(summary["stored"] as? Int == count - recorded.count && summary["existing"] as? Int == recorded.count)
        let all = try Self.recordedIDs(directory)
        let indexed = try Self.indexedIDs(directory)
        #expect(all.count == count && all.isSubset(of: indexed))
    }
}
