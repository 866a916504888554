import FlipbookTestSupport
import Foundation
import Glibc
import Testing

@testable import ImageStorage

/// Reconciliation of the data directory: what a crash leaves (images' bytes without a record, in
/// either layout, files in `tmp/`) is removed; what has a record, and what a live writer (another
/// replica) holds, is kept.
@Suite(.ownThreads) struct ReconciliationTests {
    static func write(_ bytes: [UInt8], to path: String) throws {
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
    }

    /// Opens `path` and holds an exclusive lock on it, as a live writer would, until closed.
    static func holdLock(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        try #require(flock(fd, LOCK_EX | LOCK_NB) == 0)
        return fd
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// Waits (up to 10 s) until nobody holds the lock of each of `paths`. A lock belongs to the
    /// open file description, and a process another test is spawning at that instant holds a copy
    /// of every descriptor until it execs (`O_CLOEXEC` acts only then): a `close` here may leave
    /// the lock held for that moment. Whether it is released at all is still checked.
    static func waitUntilReleased(_ paths: [String]) throws {
        let deadline = Date().addingTimeInterval(10)
        for path in paths {
            while true {
                if case .unheld(let fd) = FileLocks.probe(path) {
                    close(fd)
                    break
                }
                try #require(Date() < deadline, "\(path) is still locked 10 s after its writer closed it")
                usleep(1000)
            }
        }
    }

    /// `path` in the fan-out layout, its directory made.
    static func placed(_ path: String) throws -> String {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        return path
    }

    @Test func reconciliationRemovesOrphansAndStaleTemporaryFilesAndKeepsEverythingWithARecord() throws {
        let directory = ScratchDirectory.make("store")
        let layout = DataLayout(dataDirectory: directory)
        let bytes = try Corpus.bytes("wuffs/muybridge.gif")
        let named = try Corpus.bytes("pillow/gif/iss634.gif")
        var store: ImageStore? = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let (kept, _) = try ImageStoreLoadingTests.commit(store!, bytes)
        let (keptNamed, _) = try ImageStoreLoadingTests.commit(store!, named, name: "clip.gif")
        store = nil

        // What SIGKILLs leave: a renamed upload whose record was never written (in this layout and
        // in the earlier one), a cut-off upload and a record's temporary file.
        let orphan = String(repeating: "ab", count: 32)
        try Self.write(bytes, to: try Self.placed(layout.imagePath(orphan)))
        try Self.write(bytes, to: try Self.placed(layout.legacyObjectPath("old.gif")))
        try Self.write(Array(bytes.prefix(100)), to: directory + "/tmp/upload-crashed")
        try Self.write(Array("{".utf8), to: directory + "/tmp/.record.tmp")
        // What a live replica holds: an upload still arriving, and one renamed into place whose
        // record is being written.
        let arriving = directory + "/tmp/upload-arriving"
        let committing = try Self.placed(layout.imagePath(String(repeating: "cd", count: 32)))
        try Self.write(bytes, to: arriving)
        try Self.write(bytes, to: committing)
        let arrivingLock = try Self.holdLock(arriving)
        let committingLock = try Self.holdLock(committing)

        let reopened = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let backend = try #require(reopened.backend as? FileSystemBackend)
        #expect(backend.reconcile() == .init(orphanObjects: 2, temporaryFiles: 2, inUse: 2, tooRecent: 0))
        #expect(!Self.exists(layout.imagePath(orphan)) && !Self.exists(layout.legacyObjectPath("old.gif")))
        #expect(!Self.exists(directory + "/tmp/upload-crashed") && !Self.exists(directory + "/tmp/.record.tmp"))
        #expect(Self.exists(arriving) && Self.exists(committing))
        // Everything with a record is there and serves.
        for record in [kept, keptNamed] {
            let found = try #require(reopened.record(record.id))
            #expect(found.sha256 == record.sha256)
            #expect(try reopened.loadImage(found).frameCount == record.metadata.frameCount)
        }

        // Once their writers are gone (a crash releases the locks), the next reconciliation
        // removes them.
        close(arrivingLock)
        close(committingLock)
        try Self.waitUntilReleased([arriving, committing])
        #expect(backend.reconcile() == .init(orphanObjects: 1, temporaryFiles: 1, inUse: 0, tooRecent: 0))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/tmp").isEmpty)
        var images: Set<String> = []
        for shard in try DataLayout.names(in: layout.images) {
            images.formUnion(try DataLayout.names(in: layout.images + "/" + shard))
        }
        #expect(images == [kept.id, keptNamed.id])
    }

    @Test func anUploadHoldsItsLockUntilItsRecordIsWritten() throws {
        let directory = ScratchDirectory.make("store")
        let store = try ImageStore(dataDirectory: directory, backgroundMaintenance: false)
        let backend = try #require(store.backend as? FileSystemBackend)
        let bytes = try Corpus.bytes("wuffs/muybridge.gif")
        let upload = try store.beginUpload()
        try bytes.withUnsafeBytes { try upload.append($0) }
        // Another replica reconciling now finds the upload in use and leaves it.
        #expect(backend.reconcile() == .init(orphanObjects: 0, temporaryFiles: 0, inUse: 1, tooRecent: 0))
        #expect(Self.exists(upload.path))
        let (record, created) = try store.commit(upload)
        #expect(created)
        // Committed: the image has its record, nothing is left in tmp/, nothing is held.
        #expect(backend.reconcile() == .init())
        #expect(Self.exists(backend.layout.imagePath(record.id)))
        #expect(Self.exists(backend.layout.recordPath(record.id)))
    }

    @Test func aFileRemovedBeforeItsLockIsTakenIsCreatedAgainUnderAnotherName() throws {
        let directory = ScratchDirectory.make("store")
        var names = [directory + "/first", directory + "/second"]
        var raced = false
        let (fd, path) = try FileLocks.createLocked(
            { names.removeFirst() },
            beforeLocking: { created in
                // A reconciler on another replica probes the new, not yet locked, file and removes it.
                guard !raced else { return }
                raced = true
                if case .unheld(let probe) = FileLocks.probe(created) {
                    unlink(created)
                    close(probe)
                }
            })
        defer { close(fd) }
        #expect(raced)
        #expect(path == directory + "/second")
        #expect(!Self.exists(directory + "/first"))
        if case .held = FileLocks.probe(path) {} else { Issue.record("the new file is not held") }
    }
}
