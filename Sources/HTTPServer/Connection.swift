import Glibc
import SystemResources

/// One client connection, owned by one event loop and touched only on its thread: a read buffer
/// the parser works on, the requests awaiting their responses (in order), and the bytes queued
/// for the socket. Request handling lives in `Connection+Requests.swift`, the records of the
/// requests being answered in `Connection+Exchange.swift`, timers and the drain in
/// `Connection+Deadlines.swift`, its phases and the peer's close in `Connection+Closing.swift`.
/// The buffers it reads into and stages heads in pass between the loop's connections
/// (``ConnectionSpares``).
///
/// Back-pressure: while a write is blocked or more than `outputHighWaterBytes` are queued, no
/// request is parsed and nothing more is read (the client's sends stall in TCP) until the queue is
/// down to `outputLowWaterBytes`. Fairness: in one turn of its
/// loop a connection starts at most `requestsPerTurn` requests and makes at most `readsPerTurn`
/// reads; then it yields and the loop serves the other connections before continuing it.
final class Connection {
    // Stored properties in the order of their use (Swift lays a class's out in declaration
    // order): those every request reads or writes first, in the object's first four cache
    // lines, then the parser (large), then what requests leave alone.
    // With 256 connections a connection's state has left the core's cache by its next request,
    // and every line it touches is a miss: these were spread over eleven lines.

    let fd: Int32
    let generation: UInt32
    var phase = Phase.active
    /// Set by inner code; the loop closes the connection when the current event is done.
    var closeRequested = false
    private var readPaused = false
    private var inProcessInput = false
    /// No request is being taken because the output is backed up.
    private var pausedForOutput = false
    /// This turn's share of work done; the loop continues the connection next turn.
    private var yielded = false
    /// Whether the socket did not take all it was given (see `output`).
    private var writeBlocked = false
    /// No further requests are parsed (the connection closes after its queued responses).
    var stopParsing = false
    unowned(unsafe) let loop: EventLoop

    // Read buffer: bytes [readStart, readEnd) are unparsed. None (a nil base) while none are:
    // taken from the loop to read into, lent back to it once all is parsed (``lendReadBuffer()``).
    private var readBuffer = ConnectionSpares.noReadBuffer
    private var readStart = 0
    private var readEnd = 0
    private var turnRequests = 0
    private var turnReads = 0

    // Output: what is queued for the socket.
    var output = OutputQueue()

    // Requests.
    var inFlight: [Exchange] = []
    var current: Incoming?
    var nextSequence: UInt64 = 1
    var requestCount = 0

    // Deadlines (loop milliseconds; 0 = none).
    var idleSince: Int64
    var headStartedAt: Int64 = 0
    var bodyActivityAt: Int64 = 0
    var writeBlockedSince: Int64 = 0
    var lingerUntil: Int64 = 0
    var deadline: Int64 = 0
    var scheduledAt: Int64 = .max

    /// The most bytes ever queued for the socket (reported to the server's statistics).
    private var peakQueued = 0
    let id: UInt64
    let peer: HTTPPeerAddress?

    var parser: HTTPRequestParser

    /// What the output queue held when the connection was torn down.
    private var retainedOutputBytes = 0

    init(fd: Int32, generation: UInt32, id: UInt64, peer: HTTPPeerAddress?, loop: EventLoop) {
        self.fd = fd
        self.generation = generation
        self.id = id
        self.peer = peer
        self.loop = loop
        parser = HTTPRequestParser(limits: loop.shared.configuration.parserLimits)
        idleSince = loop.now
    }

    deinit {
        // Owned here alone: taken from the loop, not lent back (a nil base when there is none).
        readBuffer.deallocate()
        // A burst of closed connections leaves holes in the heap: counted towards handing
        // freed memory back to the kernel, on the rule the frame cache's evictions follow.
        ReleasedMemory.note(readBuffer.count + retainedOutputBytes)
    }

    var configuration: HTTPServerConfiguration { loop.shared.configuration }

    // MARK: - Events

    func handle(events: UInt32) {
        let readable = events & (Epoll.readable | Epoll.readHangUp | Epoll.hangUp | Epoll.error) != 0
        if yielded {
            // Continued after this turn's events; remember to read what arrived.
            if readable { readPaused = true }
        } else {
            startTurn()
        }
        if readable && !yielded {
            // Without a hang-up in the event, a read that leaves room in the buffer has drained
            // the socket (edge-triggered: later bytes raise a new event), so the `EAGAIN` read
            // that would confirm it is skipped.
            readAvailable(stopOnShortRead: events & (Epoll.readHangUp | Epoll.hangUp | Epoll.error) == 0)
        }
        if events & Epoll.writable != 0 && writeBlocked && !closeRequested {
            writeBlocked = false
            writeOutput()
        }
    }

    /// Reads until `EAGAIN`, parsing after every read so the buffer keeps draining; then lends
    /// the read buffer back to the loop if everything in it was parsed.
    private func readAvailable(stopOnShortRead: Bool = false) {
        readUntilDrained(stopOnShortRead: stopOnShortRead)
        lendReadBuffer()
    }

    /// Hands the read buffer to the loop (``ConnectionSpares``) when nothing in it waits to be
    /// parsed; the next connection of the loop to read takes it. Called after every parse that
    /// may empty it: a read, and the resumes (output drained, next turn) that parse bytes left
    /// over, so a connection that goes idle after a pipelined burst holds none either.
    private func lendReadBuffer() {
        guard readEnd == 0, !inProcessInput, readBuffer.baseAddress != nil else { return }
        // Safe: the buffer has one owner at a time (a connection or the loop's spares), all on
        // the loop's thread, and no pointer into it is kept past this point.
        if withLoop({ $0.spares.lendReadBuffer(readBuffer) }) { readBuffer = ConnectionSpares.noReadBuffer }
    }

    private func readUntilDrained(stopOnShortRead: Bool) {
        while !closeRequested {
            // Bytes left unread here are not reported again by edge-triggered epoll:
            // `readPaused` makes the resume read them.
            if pausedForOutput || yielded {
                readPaused = true  // back-pressure: the client's sends stall in TCP until we resume
                return
            }
            if turnReads >= configuration.readsPerTurn {
                yieldTurn()  // this turn's share is used up: continue after the others
                readPaused = true
                return
            }
            if readBuffer.baseAddress == nil {
                readBuffer = withLoop { $0.spares.takeReadBuffer(bytes: $0.shared.configuration.readBufferBytes) }
            }
            if readEnd == readBuffer.count {
                if readStart > 0 {
                    compactReadBuffer()
                } else {
                    readPaused = true  // back-pressure: leave the rest in the kernel
                    return
                }
            }
            let room = readBuffer.count - readEnd
            // `recv` rather than `read`: the socket call skips the file layer's generic read
            // path (`vfs_read`, `sock_read_iter`), about 0.1 µs a request in a kernel profile.
            let n = recv(fd, readBuffer.baseAddress! + readEnd, room, 0)
            turnReads += 1
            if n > 0 {
                readPaused = false
                if phase == .lingering {
                    continue  // discard
                }
                readEnd += n
                processInput()
                if stopOnShortRead && n < room { return }
                continue
            }
            if n == 0 {
                peerClosed()
                return
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: readPaused = false; return
            default: abort(.connectionClosed); return
            }
        }
    }

    private func compactReadBuffer() {
        let count = readEnd - readStart
        if count > 0 {
            (readBuffer.baseAddress! + 0).copyMemory(from: readBuffer.baseAddress! + readStart, byteCount: count)
        }
        readStart = 0
        readEnd = count
    }

    /// Feeds buffered bytes to the parser while requests may be taken.
    func processInput() {
        guard !inProcessInput else { return }
        inProcessInput = true
        defer { inProcessInput = false }
        while phase == .active && !closeRequested && !yielded {
            if current == nil {
                if stopParsing || inFlight.count >= configuration.maxPipelinedRequests { break }
                if loop.draining && parser.isIdle { break }
                if isOutputBackedUp {
                    pauseForOutput()
                    break
                }
                if turnRequests >= configuration.requestsPerTurn && readStart < readEnd {
                    yieldTurn()
                    break
                }
            }
            let base = readStart
            let wasIdle = parser.isIdle
            // Between requests with no byte left there is nothing to parse: no call to say so.
            if wasIdle && base == readEnd { break }
            // Nothing buffered and no buffer held: an empty input (the parser may end a request).
            let available = UnsafeRawBufferPointer(start: readBuffer.baseAddress.map { $0 + base }, count: readEnd - base)
            let (consumed, event) = parser.parse(available)
            readStart += consumed
            if wasIdle && current == nil && consumed > 0 && headStartedAt == 0 { headStartedAt = loop.now }
            guard let event else { break }
            switch event {
            case .head:
                headStartedAt = 0
                turnRequests += 1
                if let head = parser.takeHead() { startRequest(head) }
            case .body(let range):
                receiveBody(UnsafeRawBufferPointer(rebasing: available[range]))
            case .end:
                endRequest()
            case .error(let error):
                failRequest(HTTPStatus(code: error.statusCode), detail: error.detail, bodyFailure: .malformed)
            }
        }
        if readStart == readEnd {
            readStart = 0
            readEnd = 0
        }
    }

    /// Called by the loop just before the descriptor is closed.
    func tearDown() {
        if let incoming = current, case .stream(_, let sink) = incoming.mode {
            current = nil
            sink.fail(.connectionClosed)
        }
        if pausedForOutput {
            pausedForOutput = false
            loop.shared.outputPaused(false)
        }
        inFlight.removeAll()
        retainedOutputBytes = output.retainedBytes
        output.removeAll()
    }

    // MARK: - Output

    /// Queues a body array for the socket (without writing yet).
    func enqueue(_ bytes: [UInt8]) {
        output.append(bytes)
        notePeak()
    }

    /// Queues a body in a file for the socket (sent with `sendfile`).
    func enqueue(_ file: HTTPFileBody) {
        output.append(file)
    }

    /// Queues bytes that `write` appends to the connection's staging buffer (a response head).
    func enqueueStaged(_ write: (inout [UInt8]) -> Void) {
        output.appendStaged(write)
        notePeak()
    }

    func notePeak() {
        if output.byteCount > peakQueued {
            peakQueued = output.byteCount
            loop.shared.queuedOutputPeak(peakQueued)
        }
    }

    /// Whether no new request may be taken: a write is blocked, or the queue is above the mark.
    private var isOutputBackedUp: Bool {
        writeBlocked || output.byteCount >= configuration.outputHighWaterBytes
    }

    private func pauseForOutput() {
        guard !pausedForOutput else { return }
        pausedForOutput = true
        loop.shared.outputPaused(true)
    }

    /// Takes requests again once the queue is down to the low-water mark.
    private func resumeIfOutputDrained() {
        guard pausedForOutput, !writeBlocked, output.byteCount <= configuration.outputLowWaterBytes,
            !closeRequested, !inProcessInput
        else { return }
        pausedForOutput = false
        loop.shared.outputPaused(false)
        processInput()
        if readPaused && !closeRequested && !pausedForOutput { readAvailable() }
        lendReadBuffer()
    }

    // MARK: - Turns

    private func startTurn() {
        turnRequests = 0
        turnReads = 0
    }

    /// Stops for this turn; the loop continues the connection after serving the others.
    private func yieldTurn() {
        guard !yielded else { return }
        yielded = true
        loop.continueNextTurn(self)
    }

    /// The loop's next turn: carries on where ``yieldTurn()`` stopped.
    func continueTurn() {
        yielded = false
        startTurn()
        guard !closeRequested else { return }
        processInput()
        if readPaused && !closeRequested && !yielded && !pausedForOutput { readAvailable() }
        lendReadBuffer()
    }

    /// Writes queued output with vectored writes until done or `EAGAIN`.
    func writeOutput() {
        while !output.isEmpty && !writeBlocked && !closeRequested {
            let written = output.send(to: fd, vectors: loop.ioVectors, vectorCapacity: EventLoop.maxIOVectors)
            if written < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK:
                    writeBlocked = true
                    if writeBlockedSince == 0 { writeBlockedSince = loop.now }
                    return
                default:
                    abort(.connectionClosed)
                    return
                }
            }
            writeBlockedSince = 0
        }
        if output.isEmpty { withLoop { output.lend(to: &$0.spares.output) } }
        if output.isEmpty && !closeRequested { outputDrained() }
        resumeIfOutputDrained()
    }

    /// Everything queued has been written.
    private func outputDrained() {
        guard inFlight.isEmpty else { return }
        switch phase {
        case .closingAfterWrite:
            startLingering()
        case .active:
            if current == nil { idleSince = loop.now }
            if !inProcessInput {
                processInput()
                if readPaused && !closeRequested { readAvailable() }
                lendReadBuffer()
                // A response that was being written when the drain began leaves an idle
                // connection behind; close it like the idle ones `beginDrain` closed.
                if loop.draining { beginDrain() }
            }
        case .lingering:
            break
        }
    }

    /// Shuts down the write side so the client sees the end of the last response, then reads and
    /// discards whatever it still sends so that closing does not reset the connection early.
    private func startLingering() {
        phase = .lingering
        // What is buffered and unparsed will never be read: the whole buffer takes the discarded
        // bytes, not the room left after it (a 100 KB refused line took 23 reads instead of 7).
        readStart = 0
        readEnd = 0
        shutdown(fd, Int32(SHUT_WR))
        lingerUntil = loop.now + EventLoop.lingerDuration
        readAvailable()
    }
}
