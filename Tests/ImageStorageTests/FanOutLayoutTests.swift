import AnimatedImage
import FlipbookTestSupport
import Foundation
import Glibc
import Testing

@testable import ImageStorage

/// The fan-out layout of the data directory, and the move of the earlier flat layout into it:
/// nothing lost wherever a crash stops the move, images served and listed throughout, and
/// replicas of the earlier version, still writing the flat layout, neither lost nor able to undo
/// a newer write.
@Suite(.ownThreads) struct FanOutLayoutTests {
    /// An image as a replica of the earlier version stores it: `objects/<id>` and `meta/<id>.json`.
    struct Legacy {
        var id: String
        var bytes: [UInt8]
        var record: StoredImage

        init(seed: UInt64, name: String? = nil) throws {
            bytes = TinyAnimations.gif(seed: seed)
            let image = try AnimatedImage(bytes: ImageBytes(bytes), limits: .default, verification: .full)
            let sha = ContentHash.sha256Hex(bytes)
            id = name ?? sha
            record = StoredImage(
                id: id, sha256: sha, source: name == nil ? .upload : .named, storedAt: Date(),
                metadata: ImageMetadata(image: image), outputRevision: AnimatedImage.outputRevision)
        }

        func write(into directory: String) throws {
            for sub in ["objects", "meta"] {
                try FileManager.default.createDirectory(atPath: directory + "/" + sub, withIntermediateDirectories: true)
            }
            #expect(FileManager.default.createFile(atPath: directory + "/objects/" + id, contents: Data(bytes)))
            #expect(FileManager.default.createFile(atPath: directory + "/meta/" + id + ".json", contents: try record.encoded()))
        }
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// Every image of `expected` is found with its bytes, and listed, but for those of `unlisted`
    /// (which may be).
    static func expectServed(
        _ store: ImageStore, _ expected: [String: [UInt8]], _ context: String, unlisted: Set<String> = []
    ) throws {
        for (id, bytes) in expected {
            guard let record = store.record(id) else {
                Issue.record("\(context): \(id) not found")
                continue
            }
            #expect(record.sha256 == ContentHash.sha256Hex(bytes), "\(context): \(id) has another record")
            #expect(Array(try store.loadImage(record).bytes) == bytes, "\(context): \(id) has other bytes")
        }
        let listed = Set(try ListingIndexTests.listAll(store, limit: 4))
        #expect(listed.isSubset(of: Set(expected.keys)), "\(context)")
        #expect(Set(expected.keys).subtracting(unlisted).isSubset(of: listed), "\(context)")
    }

    @Test func imagesAreStoredInFanOutDirectories() throws {
        let directory = ScratchDirectory.make("store")
        let store = try ImageStore(dataDirectory: directory)
        let upload = try ImageStoreLoadingTests.commit(store, TinyAnimations.gif(seed: 1)).0
        let named = try ImageStoreLoadingTests.commit(store, TinyAnimations.gif(seed: 2), name: "clip.gif").0
        let shard = String(upload.id.prefix(3))
        #expect(Self.exists(directory + "/images/\(shard)/\(upload.id)"))
        #expect(Self.exists(directory + "/records/\(shard)/\(upload.id).json"))
        let nameShard = DataLayout.shard("clip.gif")
        #expect(DataLayout.isShard(nameShard))
        #expect(Self.exists(directory + "/images/\(nameShard)/clip.gif"))
        #expect(Self.exists(directory + "/records/\(nameShard)/clip.gif.json"))
        #expect(!Self.exists(directory + "/objects") && !Self.exists(directory + "/meta"))
        #expect(try store.delete(named.id))
        #expect(!Self.exists(directory + "/images/\(nameShard)/clip.gif"))
        #expect(!Self.exists(directory + "/records/\(nameShard)/clip.gif.json"))
    }

    /// The earlier layout of `legacy` (plus an orphan object and, for "clip", an older version in
    /// the fan-out layout), made once and copied for every run.
    static func makeEarlierLayout(_ legacy: [Legacy], older: Legacy) throws -> String {
        let template = ScratchDirectory.make("store")
        do {
            // "clip" stored by this version first, then replaced by a replica of the earlier one.
            let store = try ImageStore(dataDirectory: template, backgroundMaintenance: false)
            let upload = try store.beginUpload()
            try older.bytes.withUnsafeBytes { try upload.append($0) }
            _ = try store.commit(upload, name: older.id)
        }
        for image in legacy { try image.write(into: template) }
        let orphan = try Legacy(seed: 99)
        #expect(FileManager.default.createFile(atPath: template + "/objects/" + orphan.id, contents: Data(orphan.bytes)))
        // The earlier version had no listing index: the first start builds it from both layouts.
        try FileManager.default.removeItem(atPath: template + "/index")
        return template
    }

    @Test func nothingIsLostWhereverTheMoveOfTheEarlierLayoutStops() throws {
        let legacy =
            try (0..<5).map { try Legacy(seed: UInt64($0)) } + [
                try Legacy(seed: 10, name: "a.gif"), try Legacy(seed: 11, name: "clip"),
            ]
        let older = try Legacy(seed: 12, name: "clip")
        let template = try Self.makeEarlierLayout(legacy, older: older)
        // Stored by a replica of the earlier version after this one built the index.
        let late = try Legacy(seed: 20)
        var expected: [String: [UInt8]] = [late.id: late.bytes]
        for image in legacy { expected[image.id] = image.bytes }  // the earlier layout's "clip" is the newer

        var stops = 0
        for crashAfter in 0..<100 {
            let directory = ScratchDirectory.make("store")
            try FileManager.default.removeItem(atPath: directory)
            try FileManager.default.copyItem(atPath: template, toPath: directory)
            let backend = try FileSystemBackend(dataDirectory: directory, maintainInBackground: false)
            #expect(backend.indexAtStartup == "rebuilt")
            try late.write(into: directory)
            do {
                try backend.migrateLegacyLayout(crashAfter: crashAfter)
            } catch is FileSystemBackend.SimulatedCrash {
                stops += 1
                // What a replica sees meanwhile, and after a restart that has not finished the move.
                let reading = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
                try Self.expectServed(reading, expected, "stopped after \(crashAfter) steps", unlisted: [late.id])
                // The next start finishes it.
                let next = try FileSystemBackend(dataDirectory: directory, maintainInBackground: false)
                #expect(try next.migrateLegacyLayout().moved > 0)
                #expect(try next.migrateLegacyLayout() == .init(), "a second run finds nothing to do")
                try Self.expectServed(
                    try ImageStore(dataDirectory: directory, backgroundMaintenance: false), expected,
                    "finished after a stop after \(crashAfter) steps")
                continue
            }
            // Not stopped: every step was done (one index addition, two moves per image).
            #expect(crashAfter == 1 + 2 * expected.count)
            try Self.expectServed(try ImageStore(dataDirectory: directory, backgroundMaintenance: false), expected, "whole")
            #expect(try DataLayout.names(in: directory + "/meta").isEmpty)
            #expect(try DataLayout.names(in: directory + "/objects").count == 1, "the orphan object is not moved")
            #expect(backend.reconcile().orphanObjects == 1)
            #expect(try DataLayout.names(in: directory + "/objects").isEmpty)
            break
        }
        #expect(stops == 1 + 2 * expected.count, "every index addition and move was a stopping point")
    }

    @Test func aReplicaOfTheEarlierVersionIsServedListedAfterTheSweepAndNeverUndoesANewerWrite() throws {
        let directory = ScratchDirectory.make("store")
        let store = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let backend = try ListingIndexTests.backend(store)
        let mine = try ImageStoreLoadingTests.commit(store, TinyAnimations.gif(seed: 1)).0
        // An earlier replica stores an image: served at once (read where it is), listed once moved.
        let theirs = try Legacy(seed: 2)
        try theirs.write(into: directory)
        #expect(store.record(theirs.id)?.sha256 == theirs.record.sha256)
        #expect(Array(try store.loadImage(try #require(store.record(theirs.id))).bytes) == theirs.bytes)
        #expect(try ListingIndexTests.listAll(store) == [mine.id])
        #expect(try backend.migrateLegacyLayout() == .init(moved: 1, indexed: 1))
        try Self.expectServed(store, [mine.id: TinyAnimations.gif(seed: 1), theirs.id: theirs.bytes], "after the sweep")

        // It names an image; this version replaces it: the write moves the earlier files first, so
        // no sweep brings them back.
        let named = try Legacy(seed: 3, name: "clip")
        try named.write(into: directory)
        let newer = TinyAnimations.gif(seed: 4)
        _ = try ImageStoreLoadingTests.commit(store, newer, name: "clip")
        #expect(try backend.migrateLegacyLayout() == .init())
        let reopened = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        #expect(reopened.record("clip")?.sha256 == ContentHash.sha256Hex(newer))
        #expect(Array(try reopened.loadImage(try #require(reopened.record("clip"))).bytes) == newer)

        // It deletes nothing it cannot see, and a delete here removes the earlier files too.
        try Legacy(seed: 5, name: "gone").write(into: directory)
        #expect(try store.delete("gone"))
        #expect(store.record("gone") == nil && !Self.exists(directory + "/meta/gone.json"))
    }

    @Test func aStartOverTheEarlierLayoutRebuildsTheIndexAndMovesEverythingInTheBackground() async throws {
        let directory = ScratchDirectory.make("store")
        var expected: [String: [UInt8]] = [:]
        for seed in UInt64(0)..<40 {
            let image = try Legacy(seed: seed)
            try image.write(into: directory)
            expected[image.id] = image.bytes
        }
        let store = try ImageStore(dataDirectory: directory)  // maintenance in the background
        #expect(try ListingIndexTests.backend(store).indexAtStartup == "rebuilt")
        try Self.expectServed(store, expected, "at once")
        let deadline = Date().addingTimeInterval(30)
        while (try? DataLayout.names(in: directory + "/meta").isEmpty) != true {
            try #require(Date() < deadline, "the background move did not finish")
            try await Task.sleep(for: .milliseconds(20))
        }
        try Self.expectServed(store, expected, "moved")
    }
}

extension FanOutLayoutTests {
    /// `flipbook serve` over 2,000 images of the earlier layout, killed (SIGKILL) three times at
    /// random moments while it moves them in the background, then started once more: every
    /// image is there, with its bytes, listed, and the earlier layout is empty.
    @Test func aMoveKilledThreeTimesIsFinishedByTheNextStart() async throws {
        let directory = ScratchDirectory.make("store")
        var expected: [String: [UInt8]] = [:]
        for seed in UInt64(1000)..<3000 {
            let image = try Legacy(seed: seed)
            try image.write(into: directory)
            expected[image.id] = image.bytes
        }
        let seed = UInt64(Date().timeIntervalSince1970 * 1000)
        print("FanOutLayoutTests: the kills' seed is \(seed)")
        var generator = SplitMix64(seed: seed)
        for round in 0..<3 {
            let server = try ServeProcess(dataDirectory: directory)
            usleep(UInt32.random(in: 0...1_500_000, using: &generator))
            server.kill()
            server.process.waitUntilExit()
            let left = try DataLayout.names(in: directory + "/meta").count
            print("FanOutLayoutTests: killed \(round + 1): \(left) of \(expected.count) records not moved yet")
        }
        let server = try ServeProcess(dataDirectory: directory)
        let deadline = Date().addingTimeInterval(120)
        while (try? DataLayout.names(in: directory + "/meta").isEmpty) != true {
            try #require(Date() < deadline, "the move did not finish")
            try await Task.sleep(for: .milliseconds(50))
        }
        server.kill()
        server.process.waitUntilExit()
        try Self.expectServed(try ImageStore(dataDirectory: directory, backgroundMaintenance: false), expected, "after the kills")
    }
}
