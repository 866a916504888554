import Glibc

/// Advisory whole-file locks (`flock`) that let a process sharing the data directory tell a file
/// someone is still writing from one whose writer is gone.
///
/// Flipbook creates every file of the data directory's `tmp/` locked and keeps the lock until the
/// file is finished with: an upload's file from its first byte until its record is written (the
/// lock follows the file when it is renamed into `objects/`), a record's temporary file until it
/// is renamed into `meta/`. The kernel drops the locks of a process that dies, so after a crash
/// the files it left are unlocked: start-up reconciliation removes exactly those
/// (``FileSystemBackend/reconcile(now:)``). Locks work between the processes of one host and, on
/// NFS v4, between hosts; where `flock` is not supported, reconciliation falls back on age.
enum FileLocks {
    /// Creates `path` (it must not exist) for writing, holding an exclusive lock on it.
    ///
    /// A reconciler that probed the new file in the instant between its creation and the lock
    /// may have removed it; the name is then checked to still be this file, and a fresh name (from
    /// `makePath`) is tried when it is not. `beforeLocking` runs between the two steps (tests use
    /// it to play that reconciler).
    static func createLocked(
        _ makePath: () -> String, mode: mode_t = 0o644,
        beforeLocking: (String) -> Void = { _ in }
    ) throws -> (fd: Int32, path: String) {
        var path = ""
        for _ in 0..<8 {
            path = makePath()
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            guard fd >= 0 else { throw DurableFiles.failure("cannot create", path) }
            beforeLocking(path)
            var result: Int32
            repeat { result = flock(fd, LOCK_EX) } while result != 0 && errno == EINTR
            if result != 0 && errno != EOPNOTSUPP && errno != ENOLCK {
                let error = DurableFiles.failure("cannot lock", path)
                close(fd)
                unlink(path)
                throw error
            }
            if isStill(fd, at: path) { return (fd, path) }
            close(fd)  // removed (and perhaps replaced) before the lock was taken: try another name
        }
        throw DurableFiles.IOFailure(description: "cannot create a locked file (last tried \(path))")
    }

    /// Runs `body` holding a lock on the file at `path` (created if missing; such lock files are
    /// never removed): exclusive, or `shared` with other shared holders. Waits for it if another
    /// process or thread holds it in a conflicting way, or with `wait` false throws ``Busy``.
    /// Where the file system has no `flock`, `body` runs unlocked.
    static func holding<Result>(
        _ path: String, shared: Bool = false, wait: Bool = true, _ body: () throws -> Result
    ) throws -> Result {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DurableFiles.failure("cannot open the lock", path) }
        defer { close(fd) }  // and with it the lock
        let operation = (shared ? LOCK_SH : LOCK_EX) | (wait ? 0 : LOCK_NB)
        var result: Int32
        repeat { result = flock(fd, operation) } while result != 0 && errno == EINTR
        if result != 0 {
            if errno == EWOULDBLOCK { throw Busy() }
            if errno != EOPNOTSUPP && errno != ENOLCK { throw DurableFiles.failure("cannot lock", path) }
        }
        return try body()
    }

    /// A lock asked for without waiting is held by someone else.
    struct Busy: Error {}

    /// What a probe found out about a file.
    enum Probe {
        /// Nobody holds the file: it is locked now, by `fd`, which the caller must close.
        case unheld(fd: Int32)
        /// Another open file description (in this or another process) holds it.
        case held
        /// This file system does not support `flock`: nothing can be told.
        case unsupported
        /// The file is gone (or cannot be opened).
        case missing
    }

    /// Tries to take the lock of the file at `path` without waiting.
    static func probe(_ path: String) -> Probe {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return .missing }
        var result: Int32
        repeat { result = flock(fd, LOCK_EX | LOCK_NB) } while result != 0 && errno == EINTR
        if result == 0 {
            guard isStill(fd, at: path) else {
                close(fd)
                return .missing
            }
            return .unheld(fd: fd)
        }
        let code = errno
        close(fd)
        return code == EWOULDBLOCK ? .held : .unsupported
    }

    /// Whether `path` still names the file open as `fd`.
    private static func isStill(_ fd: Int32, at path: String) -> Bool {
        var open = stat()
        var named = stat()
        guard fstat(fd, &open) == 0, stat(path, &named) == 0 else { return false }
        return open.st_dev == named.st_dev && open.st_ino == named.st_ino
    }
}
