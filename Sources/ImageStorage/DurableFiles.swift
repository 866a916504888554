import CLinux
import Crypto
import FoundationEssentials
import Glibc
import SystemPackage
import SystemResources

/// File operations that survive a crash: write to a temporary file, `fsync` it, `rename` it into
/// place, `fsync` the directory. A file that exists under its final name is complete.
package enum DurableFiles {
    struct IOFailure: Error, CustomStringConvertible {
        var description: String
    }

    static func failure(_ what: String, _ path: String) -> IOFailure {
        IOFailure(description: "\(what) \(path): \(String(cString: strerror(errno)))")
    }

    /// Whether a file can be created in `directory` right now: one is made there and removed (a
    /// readiness probe).
    static func acceptsNewFiles(in directory: String) -> Bool {
        let probe = directory + "/.ready-" + UUID().uuidString
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        close(fd)
        unlink(probe)
        return true
    }

    /// Writes `bytes` to `path` atomically, through a temporary file in `temporaryDirectory`
    /// (which must be on the same file system), locked until it is in place (``FileLocks``).
    package static func write(_ bytes: [UInt8], to path: String, temporaryDirectory: String) throws {
        let (fd, temporary) = try writeTemporary(bytes, in: temporaryDirectory)
        defer { close(fd) }  // the lock goes with it, once the file is in place (or gone)
        guard fsync(fd) == 0 else {
            let error = failure("cannot fsync", temporary)
            unlink(temporary)
            throw error
        }
        try moveIntoPlace(temporary, path)
    }

    /// Writes `bytes` to a new file in `temporaryDirectory`, not flushed yet, and returns it open
    /// and locked (``FileLocks``): the lock lasts until `fd` is closed. Nothing is left behind
    /// when it throws.
    static func writeTemporary(_ bytes: [UInt8], in temporaryDirectory: String) throws -> (fd: Int32, path: String) {
        let (fd, temporary) = try FileLocks.createLocked { temporaryDirectory + "/." + UUID().uuidString + ".tmp" }
        do {
            try writeAll(fd, bytes, path: temporary)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        return (fd, temporary)
    }

    /// Makes every change to the file system holding `path` durable (`syncfs`): one flush for
    /// the many files of a batch (a migration's, a bulk import's) instead of an `fsync` each.
    static func syncFileSystem(of path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("cannot open", path) }
        defer { close(fd) }
        guard flipbook_syncfs(fd) == 0 else { throw failure("cannot sync the file system of", path) }
    }

    /// Renames `from` to `to` (replacing it) and makes the rename durable.
    static func moveIntoPlace(_ from: String, _ to: String) throws {
        guard rename(from, to) == 0 else {
            let error = failure("cannot rename to", to)
            unlink(from)
            throw error
        }
        try syncDirectory(of: to)
    }

    /// Removes `path` durably; false when it did not exist.
    @discardableResult
    static func remove(_ path: String) throws -> Bool {
        if unlink(path) != 0 {
            if errno == ENOENT { return false }
            throw failure("cannot remove", path)
        }
        try syncDirectory(of: path)
        return true
    }

    static func syncDirectory(of path: String) throws {
        let directory = FilePath(path).removingLastComponent().string
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("cannot open directory", directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure("cannot fsync directory", directory) }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        try bytes.withUnsafeBytes { buffer in
            try writeAll(fd, buffer, path: path)
        }
    }

    /// All of `buffer` (swift-system retries short writes and `EINTR`).
    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws {
        do {
            _ = try FileDescriptor(rawValue: fd).writeAll(buffer)
        } catch let error as Errno {
            throw IOFailure(description: "cannot write \(path): \(error)")
        }
    }

    /// Makes each directory of `paths` that is missing, with its parents.
    static func makeDirectories(_ paths: [String]) throws(StorageFailure) {
        for path in paths {
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                throw .failed("cannot create \(path): \(ErrorText.of(error))")
            }
        }
    }

    /// The whole file, read once.
    static func read(_ path: String) throws -> [UInt8] {
        try withOpenFile(path) { fd, size in
            var bytes = [UInt8](repeating: 0, count: size)
            let read = try bytes.withUnsafeMutableBytes { try readFully(fd, into: $0, path: path) }
            if read < size { bytes.removeSubrange(read...) }
            return bytes
        }
    }

    /// Calls `body` with `path` opened read-only and its size, closing it afterwards.
    static func withOpenFile<Result>(_ path: String, _ body: (Int32, Int) throws -> Result) throws -> Result {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("cannot open", path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("cannot stat", path) }
        return try body(fd, Int(info.st_size))
    }

    /// Reads from `fd` until `buffer` is full or the file ends; returns the bytes read.
    static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String) throws -> Int {
        let file = FileDescriptor(rawValue: fd)
        var offset = 0
        while offset < buffer.count {
            let n: Int
            do {
                n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[offset...]))  // retries EINTR
            } catch let error as Errno {
                throw IOFailure(description: "cannot read \(path): \(error)")
            }
            if n == 0 { break }
            offset += n
        }
        return offset
    }
}

/// An upload being streamed to a temporary file while its SHA-256 is computed, so the body is
/// never held in memory while it arrives.
public final class UploadFile: @unchecked Sendable {
    package let path: String
    private var fd: Int32
    private var hasher = SHA256()
    package private(set) var byteCount = 0

    /// A new file in `directory`, locked (``FileLocks``) until ``discard()``: through the rename
    /// into place and the writing of the image's record, so that reconciliation never takes a
    /// live upload for a crash's leftover.
    init(directory: String) throws {
        (fd, path) = try FileLocks.createLocked { directory + "/upload-" + UUID().uuidString }
    }

    deinit {
        discard()
    }

    package func append(_ chunk: UnsafeRawBufferPointer) throws {
        try DurableFiles.writeAll(fd, chunk, path: path)
        hasher.update(bufferPointer: chunk)
        byteCount += chunk.count
    }

    /// Flushes the file to disk (unless `durably` is false: a bulk import's batch is flushed
    /// at once, ``DurableFiles/syncFileSystem(of:)``) and returns the hex SHA-256 of everything
    /// appended. The file stays open, and locked, until ``discard()``.
    func finish(durably: Bool = true) throws -> String {
        guard !durably || fsync(fd) == 0 else { throw DurableFiles.failure("cannot fsync", path) }
        return ContentHash.hex(hasher.finalize())
    }

    /// Deletes the temporary file (after a failure, or once it was moved or found redundant)
    /// and lets go of its lock: call it once the image's record is written.
    package func discard() {
        unlink(path)
        if fd >= 0 {
            close(fd)
            fd = -1
        }
    }
}
