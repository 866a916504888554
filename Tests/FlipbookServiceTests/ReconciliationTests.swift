import FlipbookTestSupport
import Foundation
import Testing

@testable import FlipbookService

#if canImport(Glibc)
import Glibc
#endif

/// Start-up reconciliation of the data directory: what a crash leaves (objects without a record,
/// files in `tmp/`) is removed; what has a record, and what a live writer (another replica)
/// holds, is kept.
@Suite struct ReconciliationTests {
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

    @Test func startUpRemovesOrphansAndStaleTemporaryFilesAndKeepsEverythingWithARecord() throws {
        let directory = TestService.temporaryDirectory()
        let bytes = try Corpus.bytes("wuffs/muybridge.gif")
        let named = try Corpus.bytes("pillow/gif/iss634.gif")
        var store: ImageStore? = try ImageStore(dataDirectory: directory)
        let (kept, _) = try ImageStoreLoadingTests.commit(store!, bytes)
        let (keptNamed, _) = try ImageStoreLoadingTests.commit(store!, named, name: "clip.gif")
        store = nil

        // What SIGKILLs leave: a renamed upload whose record was never written, a cut-off upload
        // and a record's temporary file.
        let orphan = String(repeating: "ab", count: 32)
        try Self.write(bytes, to: directory + "/objects/" + orphan)
        try Self.write(Array(bytes.prefix(100)), to: directory + "/tmp/upload-crashed")
        try Self.write(Array("{".utf8), to: directory + "/tmp/.record.tmp")
        // What a live replica holds: an upload still arriving, and one renamed into place whose
        // record is being written.
        let arriving = directory + "/tmp/upload-arriving"
        let committing = directory + "/objects/" + String(repeating: "cd", count: 32)
        try Self.write(bytes, to: arriving)
        try Self.write(bytes, to: committing)
        let arrivingLock = try Self.holdLock(arriving)
        let committingLock = try Self.holdLock(committing)

        let reopened = try ImageStore(dataDirectory: directory)
        let backend = try #require(reopened.backend as? FileSystemBackend)
        #expect(backend.startupReconciliation == .init(orphanObjects: 1, temporaryFiles: 2, inUse: 2, tooRecent: 0))
        #expect(!Self.exists(directory + "/objects/" + orphan))
        #expect(!Self.exists(directory + "/tmp/upload-crashed") && !Self.exists(directory + "/tmp/.record.tmp"))
        #expect(Self.exists(arriving) && Self.exists(committing))
        // Everything with a record is there and serves.
        for record in [kept, keptNamed] {
            let found = try #require(reopened.record(record.id))
            #expect(found.sha256 == record.sha256)
            #expect(try reopened.loadImage(found).frameCount == record.metadata.frameCount)
        }

        // Once their writers are gone (a crash releases the locks), the next start removes them.
        close(arrivingLock)
        close(committingLock)
        try Self.waitUntilReleased([arriving, committing])
        let again = try ImageStore(dataDirectory: directory)
        let next = try #require(again.backend as? FileSystemBackend).startupReconciliation
        #expect(next == .init(orphanObjects: 1, temporaryFiles: 1, inUse: 0, tooRecent: 0))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/tmp").isEmpty)
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: directory + "/objects"))
                == [kept.id, keptNamed.id])
    }

    @Test func anUploadHoldsItsLockUntilItsRecordIsWritten() throws {
        let directory = TestService.temporaryDirectory()
        let store = try ImageStore(dataDirectory: directory)
        let bytes = try Corpus.bytes("wuffs/muybridge.gif")
        let upload = try store.beginUpload()
        try bytes.withUnsafeBytes { try upload.append($0) }
        // Another replica starting now finds the upload in use and leaves it.
        var probe = FileSystemBackend.reconcile(
            objects: directory + "/objects", meta: directory + "/meta",
            temporary: directory + "/tmp", now: Date().timeIntervalSince1970)
        #expect(probe == .init(orphanObjects: 0, temporaryFiles: 0, inUse: 1, tooRecent: 0))
        #expect(Self.exists(upload.path))
        let (record, created) = try store.commit(upload)
        #expect(created)
        // Committed: the object has its record, nothing is left in tmp/, nothing is held.
        probe = FileSystemBackend.reconcile(
            objects: directory + "/objects", meta: directory + "/meta",
            temporary: directory + "/tmp", now: Date().timeIntervalSince1970)
        #expect(probe == .init())
        #expect(Self.exists(directory + "/objects/" + record.id))
        #expect(Self.exists(directory + "/meta/" + record.id + ".json"))
    }

    @Test func aFileRemovedBeforeItsLockIsTakenIsCreatedAgainUnderAnotherName() throws {
        let directory = TestService.temporaryDirectory()
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
