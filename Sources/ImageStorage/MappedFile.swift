import AnimatedImage
import Glibc

/// A whole file mapped read-only (`PROT_READ`, `MAP_PRIVATE`), handed out as ``ImageBytes``
/// whose last copy unmaps it.
///
/// The pages are the kernel's page cache: shared with every other process that maps or reads
/// the file (other replicas on the same data volume), not counted as this process's anonymous
/// memory, and dropped by the kernel under pressure (they are re-read on the next access).
///
/// Only map files nobody rewrites in place: a file truncated under a mapping makes a read of
/// the lost pages raise SIGBUS. Renaming over the file or unlinking it is harmless — the
/// mapping keeps the old inode. Each mapping is one entry of the process's map count
/// (`vm.max_map_count`, 65530 by default) until it is released.
struct MappedFile {
    /// Why a file could not be mapped.
    struct Failure: Error, CustomStringConvertible {
        var path: String
        var reason: String
        /// The file is empty: there is nothing to map (and nothing that could be an image).
        var isEmpty = false

        var description: String { "cannot map \(path): \(reason)" }
    }

    /// The mapped bytes (``ImageBytes/storage`` is `.external`).
    let bytes: ImageBytes

    /// Opens `path`, maps all of it and closes the descriptor (the mapping does not need it).
    /// `onRelease` runs, after `munmap`, when the last copy of ``bytes`` is gone.
    init(path: String, onRelease: @escaping @Sendable (Int) -> Void = { _ in }) throws(Failure) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure(path, "open") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Self.failure(path, "fstat") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw Failure(path: path, reason: "not a regular file")
        }
        let size = Int(info.st_size)
        guard size > 0 else { throw Failure(path: path, reason: "the file is empty", isEmpty: true) }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0),
            address != UnsafeMutableRawPointer(bitPattern: -1)
        else {  // MAP_FAILED
            throw Self.failure(path, "mmap")
        }
        // The address crosses into the release action as an integer: raw pointers are not
        // Sendable, and the action runs on whichever thread drops the last copy.
        let start = UInt(bitPattern: address)
        bytes = ImageBytes(borrowing: UnsafeRawBufferPointer(start: address, count: size)) {
            munmap(UnsafeMutableRawPointer(bitPattern: start), size)
            onRelease(size)
        }
    }

    private static func failure(_ path: String, _ call: String) -> Failure {
        Failure(path: path, reason: "\(call): \(String(cString: strerror(errno)))")
    }
}
