import Glibc

/// The bytes a connection has queued for its socket, in order: response heads (and `100
/// Continue` lines) written into a staging buffer, response bodies sent from their own arrays
/// (no copy in user space), and bodies in files. Bytes in memory go out with `send` (one piece)
/// or vectored `sendmsg` calls — with `MSG_MORE` when a file body follows, so the head and the
/// body leave in the same segments — and file bodies with `sendfile(2)` (no copy at all).
///
/// The staging buffer is emptied, keeping its memory, when everything queued has been written and
/// it holds ``stagingRewindBytes`` or more, and lent to the event loop with the segment list
/// (``Spare``) whenever everything has been written, so answering a request allocates nothing in
/// the steady state.
struct OutputQueue {
    /// One part of the queued bytes.
    enum Segment {
        /// `staging[start..<end]`.
        case staged(start: Int, end: Int)
        /// A response body.
        case bytes([UInt8])
        /// A response body in a file.
        case file(HTTPFileBody)

        var count: Int {
            switch self {
            case .staged(let start, let end): return end - start
            case .bytes(let bytes): return bytes.count
            case .file(let body): return body.count
            }
        }

        var isFile: Bool {
            if case .file = self { return true }
            return false
        }
    }

    /// Staging memory kept between responses; a connection that once queued more gives it back.
    static let keptStagingBytes = 16 * 1024
    /// Written heads left in the staging buffer, once everything is written, before it is
    /// emptied: the next head goes after them (only `staging[start..<end]` of a queued segment is
    /// ever read), so the buffer is emptied once in every dozen or so responses rather than after
    /// each (emptying an array costs ~100 instructions, about 1% of a cached hit's).
    static let stagingRewindBytes = 4 * 1024

    private var staging: [UInt8] = []
    private var segments: [Segment] = []
    /// Bytes of `segments[0]` already written.
    private var firstOffset = 0
    /// Bytes queued and not yet written.
    private(set) var byteCount = 0

    /// Whether nothing waits to be written.
    var isEmpty: Bool { segments.isEmpty }

    /// Memory the queue itself holds (staging and segment list; bodies belong to their responses).
    var retainedBytes: Int { staging.capacity + segments.capacity * MemoryLayout<Segment>.stride }

    /// Queues a body array.
    mutating func append(_ bytes: [UInt8]) {
        if !bytes.isEmpty {
            segments.append(.bytes(bytes))
            byteCount += bytes.count
        }
    }

    /// Queues a body in a file.
    mutating func append(_ file: HTTPFileBody) {
        if file.count > 0 { segments.append(.file(file)) }
    }

    /// Queues the bytes `write` appends to the staging buffer (a response head).
    mutating func appendStaged(_ write: (inout [UInt8]) -> Void) {
        let start = staging.count
        write(&staging)
        queueStaged(from: start)
    }

    /// Memory an event loop keeps for the output queues of its connections: a staging buffer and
    /// a segment list, lent by a queue that has written everything (``lend(to:)``) and taken by
    /// the next head queued on the loop (``takeStaging(orFrom:)``), so that heads and segments go
    /// into memory still in cache rather than into one buffer and list per connection (with 256
    /// connections, those were out of cache by each one's next request).
    struct Spare {
        var staging: [UInt8] = []
        var segments: [Segment] = []
    }

    /// The staging buffer, handed out (the queue holds an empty one meanwhile) so that a head is
    /// written into it in place, with neither a closure nor an access to the queue per field;
    /// give it back with ``restoreStaging(_:queueingFrom:)``. The spare's buffer and segment list
    /// stand in for those the queue lacks.
    mutating func takeStaging(orFrom spare: inout Spare) -> [UInt8] {
        if segments.capacity == 0 { swap(&segments, &spare.segments) }
        var taken: [UInt8] = []
        swap(&taken, &staging)
        if taken.capacity == 0 { swap(&taken, &spare.staging) }
        return taken
    }

    /// Hands the staging buffer and segment list, with everything written, to `spare` where it
    /// holds none (the buffer may still hold written heads: the next one goes after them).
    mutating func lend(to spare: inout Spare) {
        guard segments.isEmpty else { return }
        if staging.capacity > 0, spare.staging.capacity == 0 { swap(&staging, &spare.staging) }
        if segments.capacity > 0, spare.segments.capacity == 0 { swap(&segments, &spare.segments) }
    }

    /// Takes back the buffer ``takeStaging(orFrom:)`` handed out and queues its bytes from
    /// `start` (its count when it was taken) on.
    mutating func restoreStaging(_ buffer: consuming [UInt8], queueingFrom start: Int) {
        // Moved in: assigned without `consume`, the buffer was retained for the property and
        // released when the parameter's lifetime ended, after the queueing.
        staging = consume buffer
        queueStaged(from: start)
    }

    /// Queues `staging[start...]`, the bytes just written after what was queued before.
    private mutating func queueStaged(from start: Int) {
        let end = staging.count
        guard end > start else { return }
        byteCount += end - start
        if case .staged(let previousStart, let previousEnd)? = segments.last, previousEnd == start {
            segments[segments.count - 1] = .staged(start: previousStart, end: end)
        } else {
            segments.append(.staged(start: start, end: end))
        }
    }

    /// Sends the next part of what is queued on `fd` and drops what was written: a file body
    /// with one `sendfile`, else the segments in memory up to the next file body (at most
    /// `vectorCapacity`) with one `send` or `sendmsg` (`MSG_NOSIGNAL`: a closed peer is an
    /// error, not a signal; `MSG_MORE` when a file body follows). Returns the system call's
    /// result (with `errno` untouched on failure).
    mutating func send(to fd: Int32, vectors: UnsafeMutablePointer<iovec>, vectorCapacity: Int) -> Int {
        if case .file(let body) = segments[0] {
            var offset = off_t(body.offset + firstOffset)
            let written = sendfile(fd, body.descriptor, &offset, body.count - firstOffset)
            if written > 0 { consume(written) }
            return written
        }
        var batch = 1
        while batch < min(segments.count, vectorCapacity) && !segments[batch].isFile { batch += 1 }
        let more = batch < segments.count && segments[batch].isFile
        let flags = Int32(MSG_NOSIGNAL) | (more ? Int32(MSG_MORE) : 0)
        let written = staging.withUnsafeBytes { staged in
            if batch == 1 {
                // One piece (a head alone, or a head before its file body): `send` takes it as
                // it is, where `sendmsg` first copies a message header and its vector in.
                return Self.withBytes(of: segments[0], from: firstOffset, staged) {
                    Glibc.send(fd, $0.baseAddress, $0.count, flags)
                }
            }
            return Self.withIOVectors(segments, firstOffset, 0, batch, vectors, staged) {
                var message = msghdr()
                message.msg_iov = vectors
                message.msg_iovlen = batch
                return sendmsg(fd, &message, flags)
            }
        }
        if written > 0 { consume(written) }
        return written
    }

    /// Forgets everything queued and gives back the staging memory.
    mutating func removeAll() {
        segments.removeAll()
        staging = []
        firstOffset = 0
        byteCount = 0
    }

    /// Pins the bodies of `segments[index..<limit]`, fills one iovec per segment (the first from
    /// `firstOffset`; staged ones point into `staged`), then calls `send`.
    private static func withIOVectors(
        _ segments: [Segment], _ firstOffset: Int, _ index: Int, _ limit: Int,
        _ vectors: UnsafeMutablePointer<iovec>, _ staged: UnsafeRawBufferPointer,
        _ send: () -> Int
    ) -> Int {
        if index == limit { return send() }
        return withBytes(of: segments[index], from: index == 0 ? firstOffset : 0, staged) { raw in
            vectors[index] = iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress!), iov_len: raw.count)
            return withIOVectors(segments, firstOffset, index + 1, limit, vectors, staged, send)
        }
    }

    /// Calls `body` with the bytes of `segment`, which is in memory, from `offset` on (staged
    /// ones in `staged`; a body's array is pinned meanwhile).
    private static func withBytes(
        of segment: Segment, from offset: Int, _ staged: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) -> Int
    ) -> Int {
        switch segment {
        case .staged(let start, let end):
            return body(UnsafeRawBufferPointer(rebasing: staged[(start + offset)..<end]))
        case .bytes(let bytes):
            return bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
        case .file:
            preconditionFailure("file bodies are sent with sendfile, not from memory")
        }
    }

    private mutating func consume(_ written: Int) {
        byteCount -= written
        var remaining = written
        var drop = 0
        while remaining > 0 && drop < segments.count {
            let left = segments[drop].count - (drop == 0 ? firstOffset : 0)
            if remaining >= left {
                remaining -= left
                drop += 1
                firstOffset = 0
            } else {
                firstOffset += remaining
                remaining = 0
            }
        }
        if drop == segments.count {
            segments.removeAll(keepingCapacity: true)
            firstOffset = 0
            if staging.capacity > Self.keptStagingBytes {
                staging = []
            } else if staging.count >= Self.stagingRewindBytes {
                staging.removeAll(keepingCapacity: true)
            }
        } else if drop > 0 {
            segments.removeFirst(drop)
        }
    }
}
