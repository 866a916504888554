import CLinux
import Glibc
import Synchronization

/// Where the cache keeps the PNG bytes of its frames: one anonymous memory file (`memfd`),
/// mapped read-write and carved into page-aligned slots. A frame there can be sent to a socket
/// with `sendfile(2)` straight from the page cache — the kernel hands the socket references to
/// the pages instead of copying the bytes, as nginx does with static files — where a frame on
/// the heap must be copied into the socket by `sendmsg`.
///
/// - Slots are whole pages, so that no two frames share a page: a page a socket still holds a
///   reference to is never written again (freeing a slot punches a hole, which takes its pages
///   out of the file; the next frame stored there gets new pages).
/// - Pages are allocated when a frame is written and freed when its slot is, so the file costs
///   what the frames hold, no more; they are shared memory, counted in the process's RSS (the
///   mapping) and in its cgroup's working set, which the pressure monitor reads.
/// - The file is larger than the budget (twice, virtual) so that free slots are found without
///   moving frames; when none is found, the frame stays on the heap (``FrameBytes`` either way).
final class FrameArena: @unchecked Sendable {
    static let pageSize = 4096

    let fd: Int32
    private let base: UnsafeMutableRawPointer
    let capacity: Int
    /// Free runs of pages, sorted by start: (first page, page count).
    private let free: Mutex<[(start: Int, count: Int)]>

    /// An arena of `capacity` bytes (rounded up to pages), or nil when this system cannot make
    /// or map a memory file.
    init?(capacity requested: Int) {
        let pages = max(1, (requested + Self.pageSize - 1) / Self.pageSize)
        let bytes = pages * Self.pageSize
        let fd = flipbook_memfd_create("flipbook-frames")
        guard fd >= 0 else { return nil }
        guard ftruncate(fd, off_t(bytes)) == 0,
            let mapping = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapping != MAP_FAILED
        else {
            close(fd)
            return nil
        }
        self.fd = fd
        base = mapping
        capacity = bytes
        free = Mutex([(0, pages)])
    }

    deinit {
        munmap(base, capacity)
        close(fd)
    }

    /// Copies `bytes` into a free slot; nil when no run of pages is free for them.
    func store(_ bytes: UnsafeRawBufferPointer) -> FrameBytes? {
        let pages = max(1, (bytes.count + Self.pageSize - 1) / Self.pageSize)
        let start: Int? = free.withLock { runs in
            guard let i = runs.firstIndex(where: { $0.count >= pages }) else { return nil }
            let run = runs[i]
            if run.count == pages {
                runs.remove(at: i)
            } else {
                runs[i] = (run.start + pages, run.count - pages)
            }
            return run.start
        }
        guard let start else { return nil }
        let offset = start * Self.pageSize
        if let source = bytes.baseAddress { (base + offset).copyMemory(from: source, byteCount: bytes.count) }
        return FrameBytes(arena: self, offset: offset, count: bytes.count, slotBytes: pages * Self.pageSize)
    }

    /// The bytes at `offset` (in the mapping).
    func bytes(at offset: Int, count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + offset, count: count)
    }

    /// Gives a slot back: its pages leave the file (a socket still sending them keeps its own
    /// references) and its run becomes free again, merged with its neighbours.
    fileprivate func release(offset: Int, slotBytes: Int) {
        _ = flipbook_punch_hole(fd, offset, slotBytes)
        let start = offset / Self.pageSize
        let count = slotBytes / Self.pageSize
        free.withLock { runs in
            var low = 0
            var high = runs.count
            while low < high {
                let mid = (low + high) / 2
                if runs[mid].start < start { low = mid + 1 } else { high = mid }
            }
            var run = (start: start, count: count)
            let at = low
            if at < runs.count, runs[at].start == run.start + run.count {
                run.count += runs[at].count
                runs.remove(at: at)
            }
            if at > 0, runs[at - 1].start + runs[at - 1].count == run.start {
                runs[at - 1].count += run.count
                return
            }
            runs.insert(run, at: at)
        }
    }

    /// Pages free now (for tests).
    var freePages: Int { free.withLock { $0.reduce(0) { $0 + $1.count } } }
}

/// The PNG bytes of one cached frame: in the cache's ``FrameArena`` (then ``file`` says where,
/// for `sendfile`), or on the heap. Immutable; its memory is given back when the last holder —
/// the cache, a hit table, a response a socket is still sending — lets go.
public final class FrameBytes: Sendable {
    /// The number of bytes.
    public let count: Int
    /// What the bytes cost: a whole number of pages in the arena, the bytes themselves on the heap.
    public let slotBytes: Int
    private let arena: FrameArena?
    private let offset: Int
    private let heap: [UInt8]

    fileprivate init(arena: FrameArena, offset: Int, count: Int, slotBytes: Int) {
        self.arena = arena
        self.offset = offset
        self.count = count
        self.slotBytes = slotBytes
        heap = []
    }

    /// Bytes kept on the heap.
    public init(_ bytes: [UInt8]) {
        arena = nil
        offset = 0
        count = bytes.count
        slotBytes = bytes.count
        heap = bytes
    }

    deinit {
        arena?.release(offset: offset, slotBytes: slotBytes)
    }

    /// The memory file the bytes are in and their offset, to send them with `sendfile(2)`; nil
    /// for bytes on the heap.
    public var file: (descriptor: Int32, offset: Int)? {
        arena.map { ($0.fd, offset) }
    }

    /// Calls `body` with the bytes, in place.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let arena { return try body(arena.bytes(at: offset, count: count)) }
        return try heap.withUnsafeBytes(body)
    }

    /// A copy of the bytes (the heap's array itself, shared, for bytes on the heap).
    public var array: [UInt8] {
        if arena == nil { return heap }
        return withUnsafeBytes { Array($0) }
    }
}
