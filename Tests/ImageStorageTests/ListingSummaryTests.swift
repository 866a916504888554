import AnimatedImage
import FlipbookTestSupport
import Foundation
import Glibc
import Testing

@testable import ImageStorage

/// The listing index's summaries: each is the summary of the record on disk, kept so by uploads,
/// replacements, rewrites, deletes and bulk imports, so that a page is answered without reading a
/// record; unknown ones (a writer's crash, a rebuild, an earlier format) are listed from the
/// record and filled in, whatever stops the filling.
@Suite(.ownThreads) struct ListingSummaryTests {
    static func upload(_ store: ImageStore, seed: UInt64, name: String? = nil, displayName: String? = nil) throws
        -> StoredImage
    {
        let upload = try store.beginUpload()
        try TinyAnimations.gif(seed: seed).withUnsafeBytes { try upload.append($0) }
        return try store.commit(upload, name: name, displayName: displayName).0
    }

    /// Every entry of the index, in order.
    static func entries(_ backend: FileSystemBackend) throws -> [ListedEntry] {
        try backend.index.page(after: nil, limit: 1_000_000)
    }

    /// The summary of every record on disk, in id order.
    static func recordSummaries(_ backend: FileSystemBackend) throws -> [ImageSummary] {
        var ids: [String] = []
        try backend.layout.enumerateStoredIDs { ids.append($0) }
        return try ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map {
            ImageSummary(try #require(try backend.fetch($0)).record)
        }
    }

    /// The index holds a summary for every id, each equal to its record's, and the listing shows
    /// exactly them.
    static func expectAllSummarised(_ store: ImageStore, _ context: String) throws {
        let backend = try ListingIndexTests.backend(store)
        let records = try recordSummaries(backend)
        let entries = try entries(backend)
        #expect(entries.map(\.summary) == records.map { Optional($0) }, "\(context)")
        #expect(try listAll(store) == records, "\(context)")
    }

    static func listAll(_ store: ImageStore, limit: Int = 3) throws -> [ImageSummary] {
        var images: [ImageSummary] = []
        var cursor: String?
        repeat {
            let page = try store.list(after: cursor, limit: limit)
            images += page.images
            cursor = page.next
        } while cursor != nil
        return images
    }

    @Test func uploadsReplacementsRewritesAndDeletesKeepEverySummaryTheRecords() throws {
        let directory = ScratchDirectory.make("store")
        let store = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let replica = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let backend = try ListingIndexTests.backend(store)
        let first = try Self.upload(store, seed: 1, displayName: "cat.gif")
        _ = try Self.upload(store, seed: 2)
        _ = try Self.upload(store, seed: 3, name: "clip")
        try Self.expectAllSummarised(store, "after uploads")
        #expect(try Self.listAll(store).first { $0.id == first.id }?.name == "cat.gif")

        // Another replica replaces the named image: both list the new content at once.
        let replaced = try Self.upload(replica, seed: 4, name: "clip")
        try Self.expectAllSummarised(store, "after a replacement")
        #expect(try Self.listAll(store).first { $0.id == "clip" }?.sha256 == replaced.sha256)

        // A rewrite (re-indexing) changes the headline: the summary follows.
        let fetched = try #require(try backend.fetch("clip"))
        var rewritten = fetched.record
        rewritten.metadata.playCount = 7
        rewritten.outputRevision = 1
        #expect(try backend.rewrite(rewritten, over: fetched.version) != nil)
        try Self.expectAllSummarised(store, "after a rewrite")
        #expect(try Self.listAll(replica).first { $0.id == "clip" }?.headline.playCount == 7)

        #expect(try replica.delete(first.id))
        try Self.expectAllSummarised(store, "after a delete")
        #expect(try backend.index.count() == 2)

        // And after a restart.
        let reopened = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        #expect(try ListingIndexTests.backend(reopened).indexAtStartup == "opened")
        try Self.expectAllSummarised(reopened, "after a restart")
    }

    @Test func aBulkImportSetsTheSummariesOfItsBatch() throws {
        let directory = ScratchDirectory.make("store")
        let store = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        var uploads: [UploadFile] = []
        for seed in UInt64(10)..<30 {
            let upload = try store.beginUpload()
            try TinyAnimations.gif(seed: seed).withUnsafeBytes { try upload.append($0) }
            uploads.append(upload)
        }
        let outcomes = store.commitAll(uploads)
        #expect(outcomes.allSatisfy { (try? $0.get()) != nil })
        try Self.expectAllSummarised(store, "after the import")
    }

    @Test func aPageIsAnsweredFromTheIndexWithoutReadingARecord() throws {
        let directory = ScratchDirectory.make("store")
        let store = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let images = try (UInt64(0)..<5).map { try Self.upload(store, seed: $0) }
        let expected = images.map(ImageSummary.init).sorted { $0.id < $1.id }
        // Every record made unreadable: a page that read one would miss it.
        let backend = try ListingIndexTests.backend(store)
        for image in images {
            #expect(FileManager.default.createFile(atPath: backend.layout.recordPath(image.id), contents: Data("{".utf8)))
        }
        let reader = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        #expect(try Self.listAll(reader, limit: 2) == expected)
    }

    @Test func unknownSummariesAreListedFromTheRecordsAndFilledIn() throws {
        let directory = ScratchDirectory.make("store")
        let store = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let backend = try ListingIndexTests.backend(store)
        let ids = try (UInt64(0)..<6).map { try Self.upload(store, seed: $0).id }.sorted()
        // Writers killed between marking their summaries unknown and setting them again: two with
        // their records written, one before (no record).
        let orphan = String(repeating: "f", count: 64)
        try backend.index.whileWriting { try backend.index.markChanging([ids[1], ids[4], orphan]) }
        #expect(try Self.entries(backend).filter { $0.summary == nil }.map(\.id) == [ids[1], ids[4], orphan])
        let reader = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        #expect(try Self.listAll(reader, limit: 2) == (try Self.recordSummaries(backend)), "listed from the records")
        #expect(try backend.index.count() == 6, "the id without a record was removed by the listing")
        try backend.index.whileWriting { try backend.index.markChanging([ids[2], orphan]) }
        #expect(try backend.fillSummaries() == .init(filled: 3, removed: 1))
        try Self.expectAllSummarised(store, "filled in")
        #expect(try backend.fillSummaries() == .init(), "nothing left to fill")
    }

    @Test func aRebuiltIndexIsFilledInWhereverTheFillingStops() throws {
        let template = ScratchDirectory.make("store")
        var store: ImageStore? = try ImageStore(dataDirectory: template, backgroundMaintenance: false)
        for seed in UInt64(0)..<9 { _ = try Self.upload(store!, seed: seed) }
        _ = try Self.upload(store!, seed: 20, name: "named", displayName: "a name.gif")
        store = nil
        try FileManager.default.removeItem(atPath: template + "/index")
        var stops = 0
        for crashAfter in 0..<20 {
            let directory = ScratchDirectory.make("store")
            try FileManager.default.removeItem(atPath: directory)
            try FileManager.default.copyItem(atPath: template, toPath: directory)
            let backend = try FileSystemBackend(dataDirectory: directory, maintainInBackground: false)
            #expect(backend.indexAtStartup == "rebuilt")
            #expect(try Self.entries(backend).allSatisfy { $0.summary == nil }, "a rebuild lists ids only")
            do {
                try backend.fillSummaries(batch: 3, crashAfter: crashAfter)
            } catch is FileSystemBackend.SimulatedCrash {
                stops += 1
                let reading = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
                #expect(try Self.listAll(reading) == (try Self.recordSummaries(backend)), "stopped after \(crashAfter)")
                let next = try FileSystemBackend(dataDirectory: directory, maintainInBackground: false)
                #expect(try next.fillSummaries(batch: 3).filled == 10 - 3 * crashAfter)
                try Self.expectAllSummarised(
                    try ImageStore(dataDirectory: directory, backgroundMaintenance: false), "after a stop at \(crashAfter)")
                continue
            }
            #expect(crashAfter == 4, "ten ids in batches of three")
            try Self.expectAllSummarised(try ImageStore(dataDirectory: directory, backgroundMaintenance: false), "whole")
            break
        }
        #expect(stops == 4)
    }

    @Test func aGenerationOfTheFormerFormatIsRebuiltWithSummaries() throws {
        let directory = ScratchDirectory.make("store")
        var store: ImageStore? = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        for seed in UInt64(0)..<4 { _ = try Self.upload(store!, seed: seed) }
        store = nil
        // What a build of format 3 (ids only) left: its generation named by CURRENT.
        let index = directory + "/index/"
        let current = String(decoding: try DurableFiles.read(index + "CURRENT"), as: UTF8.self)
        let earlier = try ListingIndexTests.backend(try ImageStore(dataDirectory: directory, backgroundMaintenance: false))
        let ids = try Self.entries(earlier).map(\.id)
        try FileManager.default.removeItem(atPath: index + current)
        let database = try SQLiteDatabase(path: index + current, create: true)
        try database.execute(
            """
            CREATE TABLE ids (id TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;
            CREATE TABLE state (key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
            INSERT INTO state VALUES ('format', 3), ('count', \(ids.count)), ('complete', 1);
            """)
        for id in ids { try database.run("INSERT INTO ids (id) VALUES (?)", [id]) }
        let reopened = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let backend = try ListingIndexTests.backend(reopened)
        #expect(backend.indexAtStartup == "rebuilt")
        #expect(try Self.listAll(reopened) == (try Self.recordSummaries(backend)))
        #expect(try backend.fillSummaries().filled == 4)
        try Self.expectAllSummarised(reopened, "after the fill")
    }

    /// `flipbook serve` over 1,500 images whose index is missing, killed (SIGKILL) at random
    /// moments while it rebuilds the index (at start, before it listens) and fills in the
    /// summaries (in the background, after), the index removed again before every other start;
    /// then started once more: every image is listed with its record's summary, nothing is left
    /// unknown.
    @Test func aFillKilledAgainAndAgainIsFinishedByTheNextStart() async throws {
        let directory = ScratchDirectory.make("store")
        for seed in UInt64(5000)..<6500 { try FanOutLayoutTests.Legacy(seed: seed).write(into: directory) }
        try FileSystemBackend(dataDirectory: directory, maintainInBackground: false).migrateLegacyLayout()
        let seed = UInt64(Date().timeIntervalSince1970 * 1000)
        print("ListingSummaryTests: the kills' seed is \(seed)")
        var generator = SplitMix64(seed: seed)
        for round in 0..<6 {
            if round % 2 == 0 { try? FileManager.default.removeItem(atPath: directory + "/index") }
            let server = Process()
            server.executableURL = URL(fileURLWithPath: try flipbookExecutable())
            server.arguments = [
                "serve", "--host", "127.0.0.1", "--port", "\(try BoundLoopbackPort.free())", "--data-dir", directory,
                "--log-level", "warning",
            ]
            server.standardOutput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            try server.run()
            usleep(UInt32.random(in: 0...1_200_000, using: &generator))
            Glibc.kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        let server = try ServeProcess(dataDirectory: directory)
        let watcher = try FileSystemBackend(dataDirectory: directory, maintainInBackground: false)
        let deadline = Date().addingTimeInterval(120)
        while try !watcher.index.unsummarised(after: nil, limit: 1).isEmpty {
            try #require(Date() < deadline, "the fill did not finish")
            try await Task.sleep(for: .milliseconds(50))
        }
        server.kill()
        server.process.waitUntilExit()
        let store = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        try Self.expectAllSummarised(store, "after the kills")
        #expect(try ListingIndexTests.backend(store).index.count() == 1500)
    }
}
