import FlipbookTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

@testable import ImageStorage

/// The listing index of a data directory: the ids in byte order on disk, kept with uploads and
/// deletes by every replica sharing the directory, rebuilt from the records when missing,
/// incomplete or damaged, and never missing an id that has a record.
@Suite(.ownThreads) struct ListingIndexTests {
    static func listAll(_ store: ImageStore, limit: Int = 3) throws -> [String] {
        var ids: [String] = []
        var cursor: String?
        repeat {
            let page = try store.list(after: cursor, limit: limit)
            #expect(page.images.count <= limit)
            ids += page.images.map(\.id)
            cursor = page.next
        } while cursor != nil
        return ids
    }

    static func backend(_ store: ImageStore) throws -> FileSystemBackend {
        try #require(store.backend as? FileSystemBackend)
    }

    /// Names whose byte order is not a locale's ('-' < '.' < digits < 'A' < '_' < 'a').
    static let names = ["a", "B", "_x", "-y", ".z", "9", "a-b", "a.b", "a_b", "aa", "Z9", "zz-top.gif"]

    @Test func pagesFollowByteOrderAndTheCursorAcrossUploadsAndDeletes() throws {
        let directory = ScratchDirectory.make("store")
        let store = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        var expected: [String] = []
        for (i, name) in Self.names.enumerated() {
            expected.append(try ImageStoreLoadingTests.commit(store, TinyAnimations.gif(seed: UInt64(i)), name: name).0.id)
        }
        for seed in UInt64(100)..<110 {
            expected.append(try ImageStoreLoadingTests.commit(store, TinyAnimations.gif(seed: seed)).0.id)
        }
        expected.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(try Self.listAll(store) == expected)
        #expect(try Self.listAll(store, limit: 1000) == expected)
        // The cursor is exclusive and need not be a stored id.
        let page = try store.list(after: "a", limit: 2)
        #expect(page.images.map(\.id) == Array(expected.drop { $0 <= "a" }.prefix(2)))
        // Deletes leave the index; a replaced name stays once.
        let last = expected.last!
        #expect(try store.delete("a"))
        #expect(try store.delete(last))
        _ = try ImageStoreLoadingTests.commit(store, TinyAnimations.gif(seed: 999), name: "B")
        expected.removeAll { $0 == "a" || $0 == last }
        #expect(try Self.listAll(store) == expected)
        #expect(try Self.backend(store).index.count() == expected.count)
    }

    @Test func aReplicaSharingTheDirectoryListsTheOthersUploadsAtOnce() throws {
        let directory = ScratchDirectory.make("store")
        let first = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let second = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let a = try ImageStoreLoadingTests.commit(first, TinyAnimations.gif(seed: 1)).0.id
        let b = try ImageStoreLoadingTests.commit(second, TinyAnimations.gif(seed: 2)).0.id
        #expect(try Self.listAll(first) == [a, b].sorted())
        #expect(try Self.listAll(second) == [a, b].sorted())
        #expect(try second.delete(a))
        #expect(try Self.listAll(first) == [b])
    }

    @Test func aMissingIndexIsRebuiltAtStartFromTheRecords() throws {
        let directory = ScratchDirectory.make("store")
        var store: ImageStore? = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let ids = try (UInt64(0)..<12).map { try ImageStoreLoadingTests.commit(store!, TinyAnimations.gif(seed: $0)).0.id }
            .sorted()
        store = nil
        try FileManager.default.removeItem(atPath: directory + "/index")
        let reopened = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        #expect(try Self.backend(reopened).indexAtStartup == "rebuilt")
        #expect(try Self.listAll(reopened) == ids)
        // A start with the index in place opens it.
        #expect(
            try Self.backend(try ImageStore(dataDirectory: directory, backgroundMaintenance: false)).indexAtStartup == "opened")
    }

    @Test func aDamagedIndexIsRebuiltAndTheDamagedGenerationRemoved() throws {
        let directory = ScratchDirectory.make("store")
        var store: ImageStore? = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let ids = try (UInt64(0)..<7).map { try ImageStoreLoadingTests.commit(store!, TinyAnimations.gif(seed: $0)).0.id }
            .sorted()
        store = nil
        let index = directory + "/index/"
        let damaged = String(decoding: try DurableFiles.read(index + "CURRENT"), as: UTF8.self)
        #expect(FileManager.default.createFile(atPath: index + damaged, contents: Data(repeating: 0x5A, count: 8192)))
        let reopened = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        #expect(try Self.backend(reopened).indexAtStartup == "rebuilt")
        #expect(try Self.listAll(reopened) == ids)
        let generations = try FileManager.default.contentsOfDirectory(atPath: index).filter { $0.hasSuffix(".sqlite") }
        #expect(generations.count == 1 && generations[0] != damaged)
    }

    @Test func aRebuildCutShortLeavesTheOldGenerationInUseAndIsRemovedLater() throws {
        let directory = ScratchDirectory.make("store")
        var store: ImageStore? = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let ids = try (UInt64(0)..<5).map { try ImageStoreLoadingTests.commit(store!, TinyAnimations.gif(seed: $0)).0.id }
            .sorted()
        store = nil
        // What a rebuild killed before it named its generation leaves: an incomplete database.
        let leftover = directory + "/index/ids-00000000-cut-short.sqlite"
        let database = try SQLiteDatabase(path: leftover, create: true)
        try database.execute("CREATE TABLE ids (id TEXT PRIMARY KEY) WITHOUT ROWID; INSERT INTO ids VALUES ('x')")
        let reopened = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        #expect(try Self.backend(reopened).indexAtStartup == "opened")
        #expect(try Self.listAll(reopened) == ids)
        #expect(!FileManager.default.fileExists(atPath: leftover), "removed at start-up: nobody had it open")
    }

    @Test func anIDWhoseWriterDiedBeforeItsRecordIsSkippedAndRemoved() throws {
        let directory = ScratchDirectory.make("store")
        let store = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let ids = try (UInt64(0)..<4).map { try ImageStoreLoadingTests.commit(store, TinyAnimations.gif(seed: $0)).0.id }.sorted()
        let backend = try Self.backend(store)
        // A writer that added its id and was killed before writing the record.
        let orphan = String(repeating: "0", count: 64)
        try backend.index.whileWriting { try backend.index.markChanging([orphan]) }
        #expect(try backend.index.count() == 5)
        let page = try store.list(after: nil, limit: 4)
        #expect(page.images.map(\.id) == ids, "the page is full despite the id without a record")
        #expect(page.next == nil)
        #expect(try backend.index.count() == 4, "the id without a record was removed")
    }

    @Test func everyIdWithARecordIsListedWhateverTheRebuildsBetweenUploads() throws {
        // Uploads on two threads while a third rebuilds the index again and again: after each
        // rebuild and at the end, every upload that finished is listed.
        let directory = ScratchDirectory.make("store")
        let store = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        // Another process sharing the directory.
        let replica = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        #expect(try Self.listAll(replica).isEmpty)
        let backend = try Self.backend(store)
        let done = DispatchGroup()
        let uploaded = Mutex<[String]>([])
        for thread in 0..<2 {
            DispatchQueue.global().async(group: done) {
                for i in 0..<25 {
                    let seed = UInt64(thread * 1000 + i)
                    if let id = try? ImageStoreLoadingTests.commit(store, TinyAnimations.gif(seed: seed)).0.id {
                        uploaded.withLock { $0.append(id) }
                    }
                }
            }
        }
        var rebuilds = 0
        while done.wait(timeout: .now()) == .timedOut {
            let before = Set(uploaded.withLock { $0 })
            try backend.index.rebuild(
                replacing: String(decoding: try DurableFiles.read(directory + "/index/CURRENT"), as: UTF8.self))
            rebuilds += 1
            let listed = Set(try Self.listAll(store, limit: 1000))
            #expect(before.isSubset(of: listed))
        }
        #expect(rebuilds >= 1)
        let all = uploaded.withLock { $0 }
        #expect(all.count == 50)
        #expect(try Self.listAll(store, limit: 7) == all.sorted())
        #expect(try Self.listAll(replica, limit: 7) == all.sorted(), "the replica follows CURRENT to the new generation")
    }
}

/// Group commits: every change committed exactly once, together with the changes of the writers
/// waiting meanwhile, and a failed transaction failing every change in it.
@Suite(.ownThreads) struct GroupCommitTests {
    struct Failed: Error {}

    @Test func concurrentChangesShareTransactionsAndEachIsCommittedOnce() {
        let commits = GroupCommits<String, Failed>()
        let committed = Mutex<[String]>([])
        let batches = Mutex<[Int]>([])
        // Eight threads of their own: concurrentPerform runs only as many at once as there are
        // cores, and with two, each change found the previous one's commit over and came alone.
        Self.onThreads(8) { writer in
            for i in 0..<40 {
                let result = commits.submit("\(writer)-\(i)") { batch in
                    usleep(2000)  // as an fsync takes
                    committed.withLock { $0 += batch }
                    batches.withLock { $0.append(batch.count) }
                    return .success(())
                }
                if case .failure = result { Issue.record("\(writer)-\(i) failed") }
                #expect(committed.withLock { $0.contains("\(writer)-\(i)") }, "returned before its commit")
            }
        }
        let all = committed.withLock { $0 }
        #expect(all.count == 320 && Set(all).count == 320)
        let sizes = batches.withLock { $0 }
        #expect(sizes.count < 320 && sizes.max()! > 1, "batches: \(sizes.count), largest \(sizes.max()!)")
    }

    /// Runs `body(0..<count)` on `count` threads at once and returns when all have finished.
    static func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                body(index)
                group.leave()
            }
            thread.start()
        }
        group.wait()
    }

    @Test func aFailedTransactionFailsEveryChangeInIt() {
        let commits = GroupCommits<String, Failed>()
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 4) { writer in
            for i in 0..<20 {
                let result = commits.submit("\(writer)-\(i)") { batch in
                    usleep(1000)
                    return batch.contains("2-7") ? .failure(Failed()) : .success(())
                }
                if case .failure = result { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.withLock { $0 } >= 1, "the change 2-7 failed, with its batch")
    }
}
