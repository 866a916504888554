#if canImport(Glibc)
import Glibc
#endif

/// One client connection, owned by one event loop and touched only on its thread: a read buffer
/// the parser works on, the requests awaiting their responses (in order), and the bytes queued
/// for the socket. Request handling lives in `Connection+Requests.swift`.
final class Connection {
    enum Phase {
        /// Reading requests and writing responses.
        case active
        /// The last response is queued; once written, the write side is shut down.
        case closingAfterWrite
        /// Write side shut down; reading and discarding until the peer closes or a timer fires.
        case lingering
    }

    /// A request that has a head and waits for (or has) its response.
    struct Exchange {
        var sequence: UInt64
        var method: HTTPMethod
        var path: String
        /// The matched route's pattern and position (nil and -1 when none matched).
        var route: String?
        var routeIndex: Int
        var headers: HTTPHeaders
        var requestID: HTTPRequestID
        var isHead: Bool
        var isHTTP10: Bool
        var keepAlive: Bool
        var startNanoseconds: UInt64
        var response: HTTPResponse?
        var pendingContinue = false
    }

    /// How the body of the request being received is handled.
    enum BodyMode {
        /// The answer is already decided; the body (if any) is not read.
        case reject
        /// Collected in memory, then the handler runs.
        case collect(maxBytes: Int, handler: Router.Handler, request: HTTPRequest, body: [UInt8])
        /// Streamed to a sink.
        case stream(maxBytes: Int, sink: any HTTPBodySink)
    }

    /// The request whose head was parsed but whose body has not ended.
    struct Incoming {
        var sequence: UInt64
        var mode: BodyMode
        var received = 0
    }

    let fd: Int32
    let generation: UInt32
    let id: UInt64
    let peer: HTTPPeerAddress?
    unowned(unsafe) let loop: EventLoop

    var phase = Phase.active
    /// Set by inner code; the loop closes the connection when the current event is done.
    var closeRequested = false
    var parser: HTTPRequestParser

    // Read buffer: bytes [readStart, readEnd) are unparsed.
    private let readBuffer: UnsafeMutableRawBufferPointer
    private var readStart = 0
    private var readEnd = 0
    private var readPaused = false
    private var inProcessInput = false

    // Requests.
    var inFlight: [Exchange] = []
    var current: Incoming?
    var nextSequence: UInt64 = 1
    var requestCount = 0
    /// No further requests are parsed (the connection closes after its queued responses).
    var stopParsing = false

    // Output: what is queued for the socket, and whether the socket took all it could.
    private var output = OutputQueue()
    private var writeBlocked = false

    // Deadlines (loop milliseconds; 0 = none).
    private var idleSince: Int64
    var headStartedAt: Int64 = 0
    var bodyActivityAt: Int64 = 0
    private var writeBlockedSince: Int64 = 0
    private var lingerUntil: Int64 = 0
    private var deadline: Int64 = 0
    private var scheduledAt: Int64 = .max

    init(fd: Int32, generation: UInt32, id: UInt64, peer: HTTPPeerAddress?, loop: EventLoop) {
        self.fd = fd
        self.generation = generation
        self.id = id
        self.peer = peer
        self.loop = loop
        parser = HTTPRequestParser(limits: loop.shared.configuration.parserLimits)
        readBuffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: max(1024, loop.shared.configuration.readBufferBytes), alignment: 16)
        idleSince = loop.now
    }

    deinit {
        readBuffer.deallocate()
    }

    var configuration: HTTPServerConfiguration { loop.shared.configuration }

    // MARK: - Events

    func handle(events: UInt32) {
        if events & (Epoll.readable | Epoll.readHangUp | Epoll.hangUp | Epoll.error) != 0 {
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

    /// Reads until `EAGAIN`, parsing after every read so the buffer keeps draining.
    private func readAvailable(stopOnShortRead: Bool = false) {
        while !closeRequested {
            if readEnd == readBuffer.count {
                if readStart > 0 {
                    compactReadBuffer()
                } else {
                    readPaused = true // back-pressure: leave the rest in the kernel
                    return
                }
            }
            let room = readBuffer.count - readEnd
            let n = read(fd, readBuffer.baseAddress! + readEnd, room)
            if n > 0 {
                readPaused = false
                if phase == .lingering {
                    continue // discard
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
        while phase == .active && !closeRequested {
            if current == nil {
                if stopParsing || inFlight.count >= configuration.maxPipelinedRequests { break }
                if loop.draining && parser.isIdle { break }
            }
            let base = readStart
            let available = UnsafeRawBufferPointer(start: readBuffer.baseAddress! + base, count: readEnd - base)
            let wasIdle = parser.isIdle
            let (consumed, event) = parser.parse(available)
            readStart += consumed
            if wasIdle && current == nil && consumed > 0 && headStartedAt == 0 { headStartedAt = loop.now }
            guard let event else { break }
            switch event {
            case .head(let head):
                headStartedAt = 0
                startRequest(head)
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

    private func peerClosed() {
        switch phase {
        case .lingering:
            closeRequested = true
        case .active, .closingAfterWrite:
            if current != nil || !parser.isIdle || inFlight.isEmpty {
                // A half-sent request can never complete; with nothing pending there is nothing to do.
                abort(.connectionClosed)
            } else {
                // The client half-closed after complete requests: answer them, then close.
                stopParsing = true
                phase = .closingAfterWrite
            }
        }
    }

    /// Closes at once, failing a streamed body in progress.
    func abort(_ reason: HTTPBodyFailure) {
        if let incoming = current, case .stream(_, let sink) = incoming.mode {
            current = nil
            sink.fail(reason)
        }
        closeRequested = true
    }

    /// Called by the loop just before the descriptor is closed.
    func tearDown() {
        if let incoming = current, case .stream(_, let sink) = incoming.mode {
            current = nil
            sink.fail(.connectionClosed)
        }
        inFlight.removeAll()
        output.removeAll()
    }

    // MARK: - Output

    /// Queues a body array for the socket (without writing yet).
    func enqueue(_ bytes: [UInt8]) {
        output.append(bytes)
    }

    /// Queues bytes that `write` appends to the connection's staging buffer (a response head).
    func enqueueStaged(_ write: (inout [UInt8]) -> Void) {
        output.appendStaged(write)
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
        if output.isEmpty && !closeRequested { outputDrained() }
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
        shutdown(fd, Int32(SHUT_WR))
        lingerUntil = loop.now + EventLoop.lingerDuration
        readAvailable()
    }

    // MARK: - Deadlines

    /// Recomputes the one deadline that applies to the connection's state.
    func updateDeadline() {
        var next: Int64 = 0
        let config = configuration
        switch phase {
        case .lingering:
            next = lingerUntil
        case .active, .closingAfterWrite:
            if writeBlockedSince != 0 {
                next = writeBlockedSince + config.writeIdleTimeout.milliseconds
            } else if current != nil && bodyActivityAt != 0 {
                next = bodyActivityAt + config.bodyReadIdleTimeout.milliseconds
            } else if headStartedAt != 0 {
                next = headStartedAt + config.headerReadTimeout.milliseconds
            } else if inFlight.isEmpty && current == nil && phase == .active {
                let idle = requestCount == 0 ? config.headerReadTimeout : config.keepAliveIdleTimeout
                next = idleSince + idle.milliseconds
            }
        }
        deadline = next
        if next != 0 && next < scheduledAt {
            scheduledAt = next
            loop.schedule(self, at: next)
        }
    }

    /// A heap entry for this connection came due (it may be stale).
    func timerFired(_ entryDeadline: Int64) {
        if entryDeadline == scheduledAt { scheduledAt = .max } else if entryDeadline > scheduledAt { return }
        guard deadline != 0 else { return }
        guard deadline <= loop.now else {
            // The deadline moved later; the next settle re-arms it.
            return
        }
        expire()
    }

    private func expire() {
        switch phase {
        case .lingering:
            closeRequested = true
        case .active, .closingAfterWrite:
            if writeBlockedSince != 0 {
                abort(.connectionClosed)
            } else if current != nil && bodyActivityAt != 0 {
                failRequest(.requestTimeout, detail: "The request body did not arrive in time.", bodyFailure: .timedOut)
            } else if headStartedAt != 0 {
                headStartedAt = 0
                failRequest(.requestTimeout, detail: "The request head did not arrive in time.", bodyFailure: .timedOut)
            } else if inFlight.isEmpty && current == nil {
                closeRequested = true // idle keep-alive connection
            }
        }
    }

    // MARK: - Drain

    /// The server is shutting down: close now if idle, otherwise finish what is in flight.
    func beginDrain() {
        guard phase == .active else { return }
        if inFlight.isEmpty && current == nil && parser.isIdle && output.isEmpty {
            closeRequested = true
        }
    }
}
