import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import SystemResources

/// The access log: one line per response, which costs the event loop only formatting the line
/// into memory.
///
/// - Each event loop appends its lines to its own chunk (64 KiB) behind its own lock, which only
///   that loop and the writer take — no lock shared between loops, no system call per line.
/// - A background thread writes chunks in large writes: a full chunk at once, the rest every
///   100 ms, everything on ``flush()`` and ``close()`` (the server calls them once it has drained,
///   so no line of a graceful stop is lost).
/// - Chunks come from a bounded pool. When the writer falls behind (a slow disk, a stalled
///   pipe) and the pool is empty, lines are dropped and counted — a loop never waits for the log.
/// - To a file, the destination is reopened on ``reopen()`` (SIGHUP, for logrotate); to a pipe
///   (stderr under a container runtime) chunks are written in pieces of at most `PIPE_BUF` bytes
///   that end at line ends, so other writers of the pipe never land inside a line.
public final class AccessLog: Sendable {
    /// Where lines go.
    public enum Destination: Sendable, Equatable {
        case standardError
        case file(String)
    }

    /// Sizes and timing.
    public struct Tuning: Sendable {
        /// Bytes of one chunk; a full chunk is handed to the writer at once.
        public var chunkBytes = 64 * 1024
        /// Chunks in the pool per event loop (one is being filled, the others wait for or are
        /// being written); beyond them lines are dropped. 16 × 64 KiB holds about 5,000 lines per
        /// loop: the writer may be kept off a busy CPU for a few hundred milliseconds at tens of
        /// thousands of requests per second before a line is lost (with 4, a loaded 2-core
        /// machine dropped 0.7% of the lines of `make bench-serve`).
        public var chunksPerLoop = 16
        /// The longest a line waits in a chunk that is not full, in milliseconds.
        public var flushMilliseconds = 100

        public init() {}
    }

    /// Memory lines are formatted into, allocated once and reused: a loop and the writer hand it
    /// to each other under the locks, so only one of them touches it at a time.
    final class ChunkMemory: @unchecked Sendable {
        let base: UnsafeMutableRawPointer
        let capacity: Int

        init(capacity: Int) {
            base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
            self.capacity = capacity
        }

        deinit { base.deallocate() }
    }

    /// Lines formatted so far into one buffer: its first `used` bytes.
    struct Chunk {
        var memory: ChunkMemory
        var used = 0
        var lines = 0

        init(capacity: Int) {
            memory = ChunkMemory(capacity: capacity)
        }

        var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: memory.base, count: used) }
    }

    /// Totals for `/stats` and `/metrics`.
    public struct Counts: Sendable, Equatable, Codable {
        public var linesWritten = 0
        public var linesDropped = 0
    }

    private struct LoopState {
        var chunk: Chunk
        var dropped = 0
        /// The time fields of this loop's lines, rebuilt once per second.
        var clock = AccessLogClock()
    }

    private struct Shared {
        var ready: [Chunk] = []
        var free: [Chunk] = []
        var written = 0
        /// Lines lost by failed writes.
        var lost = 0
        var reopenRequested = false
        var flushRequested = 0
        var flushed = 0
        var stopping = false
        var stopped = false
    }

    public let destination: Destination
    public let format: AccessLogFormat
    private let tuning: Tuning
    private let loops: PerLoop<LoopState>
    private let shared: Mutex<Shared>
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// Written only by the writer thread.
    private let output: Mutex<Int32>

    /// Opens the destination and starts the writer thread.
    public init(destination: Destination, format: AccessLogFormat, loops: Int, tuning: Tuning = Tuning()) throws {
        self.destination = destination
        self.format = format
        self.tuning = tuning
        let count = max(1, loops)
        let chunkBytes = tuning.chunkBytes
        self.loops = PerLoop(count: count) { LoopState(chunk: Chunk(capacity: chunkBytes)) }
        var pool = Shared()
        for _ in 0..<count * max(1, tuning.chunksPerLoop - 1) { pool.free.append(Chunk(capacity: chunkBytes)) }
        shared = Mutex(pool)
        output = Mutex(try Self.open(destination))
        DetachedThread.start(name: "flipbook-access-log") { [self] in self.run() }
    }

    // MARK: Event loops

    /// Formats one line into the loop's chunk; hands the chunk to the writer when full. Never
    /// blocks: without a free chunk, the line is dropped and counted.
    func append(_ line: AccessLogLine) {
        let handedOver = loops.withLock(line.record.loop) { state -> Bool in
            let needed = format.maximumLength(of: line)
            var handedOver = false
            if state.chunk.used + needed > state.chunk.memory.capacity {
                if state.chunk.used > 0 {
                    guard let fresh = takeFreeChunk() else {
                        state.dropped += 1
                        return false
                    }
                    let full = state.chunk
                    state.chunk = fresh
                    shared.withLock { $0.ready.append(full) }
                    handedOver = true
                }
                // A line longer than a whole chunk (only with a small `Tuning.chunkBytes`).
                if needed > state.chunk.memory.capacity { state.chunk = Chunk(capacity: needed) }
            }
            let start = state.chunk.memory.base + state.chunk.used
            let written = format.write(line, clock: &state.clock, to: start)
            state.chunk.used += written
            state.chunk.lines += 1
            return handedOver
        }
        if handedOver { wake.signal() }
    }

    private func takeFreeChunk() -> Chunk? {
        shared.withLock { $0.free.popLast() }
    }

    // MARK: Control

    /// Writes every line appended so far, and returns once they are written.
    public func flush() {
        let target = shared.withLock { state -> Int? in
            guard !state.stopped else { return nil }
            state.flushRequested += 1
            return state.flushRequested
        }
        guard let target else { return }
        wake.signal()
        while shared.withLock({ $0.flushed < target && !$0.stopped }) {
            usleep(1000)
        }
    }

    /// Reopens the file (after logrotate moved it away); nothing for stderr.
    public func reopen() {
        shared.withLock { $0.reopenRequested = true }
        wake.signal()
    }

    /// Writes everything appended so far and stops the writer; lines appended later are dropped.
    public func close() {
        let first = shared.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        wake.signal()
        done.wait()
    }

    /// Lines written and dropped so far.
    public var counts: Counts {
        var dropped = 0
        loops.withEachLock { dropped += $0.dropped }
        return shared.withLock { Counts(linesWritten: $0.written, linesDropped: dropped + $0.lost) }
    }

    // MARK: The writer

    private func run() {
        while true {
            _ = wake.wait(timeout: .now() + .milliseconds(tuning.flushMilliseconds))
            let (reopen, flushTarget, stopping) = shared.withLock { state in
                defer { state.reopenRequested = false }
                return (state.reopenRequested, state.flushRequested, state.stopping)
            }
            if reopen { reopenOutput() }
            // Chunks that filled up, then what the loops hold now (the interval is up, or a
            // flush or the stop wants everything).
            var chunks = shared.withLock { state -> [Chunk] in
                defer { state.ready.removeAll(keepingCapacity: true) }
                return state.ready
            }
            loops.withEachLock { state in
                guard state.chunk.used > 0 else { return }
                let fresh = takeFreeChunk() ?? Chunk(capacity: tuning.chunkBytes)
                chunks.append(state.chunk)
                state.chunk = fresh
            }
            var written = 0
            var lost = 0
            for chunk in chunks {
                if writeFully(chunk.bytes) { written += chunk.lines } else { lost += chunk.lines }
            }
            let finished = shared.withLock { state -> Bool in
                state.written += written
                state.lost += lost
                for var chunk in chunks
                where state.free.count < loops.count * max(1, tuning.chunksPerLoop - 1)
                    && chunk.memory.capacity == tuning.chunkBytes
                {
                    chunk.used = 0
                    chunk.lines = 0
                    state.free.append(chunk)
                }
                state.flushed = max(state.flushed, flushTarget)
                if stopping && state.ready.isEmpty {
                    state.stopped = true
                    return true
                }
                return false
            }
            if finished { break }
        }
        output.withLock { fd in
            if case .file = destination { Glibc.close(fd) }
        }
        done.signal()
    }

    /// Writes all of `raw`; false when the destination failed (the lines are lost).
    private func writeFully(_ raw: UnsafeRawBufferPointer) -> Bool {
        output.withLock { fd in
            let pieceLimit = Self.isPipe(fd) ? Int(PIPE_BUF) : Int.max
            var offset = 0
            while offset < raw.count {
                var end = raw.count
                if end - offset > pieceLimit {
                    // Cut after the last newline that fits, so each write holds whole lines.
                    end = offset + pieceLimit
                    while end > offset && raw[end - 1] != 0x0A { end -= 1 }
                    if end == offset { end = offset + pieceLimit }  // one line longer than a piece
                }
                let n = write(fd, raw.baseAddress! + offset, end - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
    }

    private func reopenOutput() {
        guard case .file = destination, let fresh = try? Self.open(destination) else { return }
        output.withLock { fd in
            Glibc.close(fd)
            fd = fresh
        }
    }

    private static func open(_ destination: Destination) throws -> Int32 {
        switch destination {
        case .standardError:
            return STDERR_FILENO
        case .file(let path):
            let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw AccessLogError(description: "cannot open the access log \(path): \(String(cString: strerror(errno)))")
            }
            return fd
        }
    }

    private static func isPipe(_ fd: Int32) -> Bool {
        var info = stat()
        return fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO
    }
}

/// Why the access log could not be opened.
struct AccessLogError: Error, CustomStringConvertible {
    var description: String
}
