import Glibc
import Logging
import Synchronization
import SystemResources

/// One epoll loop on its own thread. It owns its connections (touched only from its thread), a
/// deadline heap, and an inbox through which other threads hand it responses, connections and
/// the drain order, waking it with an eventfd. Every loop accepts from the shared listening
/// socket (``ListeningSocket``), and keeps the connection unless another loop holds fewer.
final class EventLoop: @unchecked Sendable {
    private struct Inbox {
        var responses: [(ResponseToken, HTTPResponse)] = []
        var adopted: [(fd: Int32, peer: HTTPPeerAddress?)] = []
        var drain = false
        var wakePending = false
        var closed = false
    }

    private static let wakeData: UInt64 = UInt64.max
    private static let listenData: UInt64 = UInt64.max - 1
    private static let eventCapacity = 256
    private static let lingerMilliseconds: Int64 = 2000

    private let paddingBefore = CacheLinePadding()
    let index: Int
    let shared: ServerShared
    let epfd: Int32
    private let wakeFD: Int32
    private let inbox = Mutex(Inbox())
    private let eventBuffer: UnsafeMutableRawPointer
    /// Scratch iovecs for the connection writing right now (loop thread only).
    let ioVectors: UnsafeMutablePointer<iovec>
    static let maxIOVectors = 16

    // Loop-thread state.
    private var connections: [Connection?] = []
    /// Connections that used up their turn's share of work, continued after the others.
    private var continuing: [Connection] = []
    private(set) var liveConnections = 0
    /// The connections this loop holds or has been handed and not yet registered: what another
    /// loop reads to decide who takes a new connection (any thread).
    let assigned = Atomic<Int>(0)
    private var timers = TimerHeap()
    /// The monotonic clock as read once when this turn began (after `epoll_wait` returned), in
    /// nanoseconds: when the requests read in this turn arrived, as far as the server can tell,
    /// and the time its timers are due against. One read a turn, as nginx's cached time: the
    /// clock read by each request cost about 22 ns a read on this machine's TSC clock.
    private(set) var turnStartNanoseconds: Int64 = SystemMonotonicClock().nanoseconds()
    /// ``turnStartNanoseconds`` in milliseconds: the deadlines' unit.
    var now: Int64 { turnStartNanoseconds / 1_000_000 }
    private(set) var date = HTTPDateCache()
    /// `Server`, `Date`, the hook's constant lines and the request-id header's `Name: `: the
    /// bytes every head carries before its id, rebuilt with the date (once a second) so that a
    /// response copies them in one go.
    private var commonLines: [UInt8] = []
    /// Memory its connections pass between them (loop thread only).
    var spares = ConnectionSpares()
    private var nextGeneration: UInt32 = 1
    private(set) var draining = false
    private var drainDeadline: Int64?
    private var running = true
    /// Ids the server makes: a random high half per loop (distinct between the loops of one
    /// process) and a counter.
    private let requestIDPrefix: UInt64
    private var requestIDCounter: UInt32 = 0
    /// ``ServerShared/requestIDLowercasedName``, empty for none: not an optional, so that a
    /// look-up borrows it (bound out of the optional, it was retained for each request).
    private let requestIDName: [UInt8]

    // Accepting state (EventLoop+Accepting.swift).
    var listener: ListeningSocket?
    /// Every loop accepting from `listener`, this one included.
    var peers: [EventLoop] = []
    /// Whether the listening socket is in this loop's epoll (not while accepting backs off).
    var watchingListener = false
    var acceptResumeAt: Int64?
    var lastAcceptWarning: Int64 = 0
    /// (The loops are made one after another: padded, what one writes every turn shares no
    /// cache line with the next, ``CacheLinePadding``.)
    private let paddingAfter = CacheLinePadding()

    init(index: Int, shared: ServerShared) throws {
        self.index = index
        self.shared = shared
        requestIDPrefix = UInt64(shared.requestIDBase &+ UInt32(truncatingIfNeeded: index)) << 32
        requestIDName = shared.requestIDLowercasedName ?? []
        epfd = Epoll.create()
        guard epfd >= 0 else { throw HTTPServerError(operation: "epoll_create1", code: errno) }
        wakeFD = Epoll.makeEventFD()
        guard wakeFD >= 0 else {
            let code = errno
            POSIX.closeDescriptor(epfd)
            throw HTTPServerError(operation: "eventfd", code: code)
        }
        eventBuffer = UnsafeMutableRawPointer.allocate(byteCount: Self.eventCapacity * Epoll.eventStride, alignment: 8)
        ioVectors = UnsafeMutablePointer<iovec>.allocate(capacity: Self.maxIOVectors)
        _ = Epoll.add(epfd, fd: wakeFD, events: Epoll.readable | Epoll.edgeTriggered, data: Self.wakeData)
    }

    deinit {
        eventBuffer.deallocate()
        ioVectors.deallocate()
        spares.deallocate()
    }

    /// Makes this loop accept from `listener` (one of its holders), sharing connections with `loops`.
    func accept(from listener: ListeningSocket, loops: [EventLoop]) {
        self.listener = listener
        peers = loops
        watchListener()
    }

    /// Puts the listening socket in this loop's epoll: level-triggered, so that a connection
    /// left in the queue is reported again, and exclusive, so that one loop is woken for it.
    func watchListener() {
        guard let listener, !watchingListener else { return }
        let events = Epoll.readable | Epoll.exclusive
        watchingListener = Epoll.add(epfd, fd: listener.fd, events: events, data: Self.listenData) == 0
        if !watchingListener {
            shared.logger.error("epoll_ctl ADD (listening socket) failed", metadata: ["errno": "\(errno)"])
        }
    }

    /// Takes the listening socket out of this loop's epoll (accepting backs off, or stops).
    func unwatchListener() {
        guard let listener, watchingListener else { return }
        Epoll.remove(epfd, fd: listener.fd)
        watchingListener = false
    }

    /// Stops accepting for good: this loop lets the listening socket go.
    private func stopAccepting() {
        unwatchListener()
        listener?.release()
        listener = nil
        peers = []
        acceptResumeAt = nil
    }

    // MARK: - Cross-thread entry points

    /// Hands a response to the connection that waits for it; callable from any thread.
    func deliver(_ response: HTTPResponse, to token: ResponseToken) {
        let wake = inbox.withLock { inbox -> Bool in
            guard !inbox.closed else { return false }
            inbox.responses.append((token, response))
            return Self.claimWake(&inbox)
        }
        if wake { signal() }
    }

    /// Gives this loop an accepted connection (already counted in ``assigned``); callable from any
    /// thread.
    func adopt(fd: Int32, peer: HTTPPeerAddress?) {
        let (accepted, wake) = inbox.withLock { inbox -> (Bool, Bool) in
            guard !inbox.closed else { return (false, false) }
            inbox.adopted.append((fd, peer))
            return (true, Self.claimWake(&inbox))
        }
        if !accepted {
            POSIX.closeDescriptor(fd)
            assigned.subtract(1, ordering: .relaxed)
            shared.connectionClosed()
        }
        if wake { signal() }
    }

    /// Starts the graceful drain on this loop; callable from any thread.
    func requestDrain() {
        let wake = inbox.withLock { inbox -> Bool in
            guard !inbox.closed else { return false }
            inbox.drain = true
            return Self.claimWake(&inbox)
        }
        if wake { signal() }
    }

    private static func claimWake(_ inbox: inout Inbox) -> Bool {
        if inbox.wakePending { return false }
        inbox.wakePending = true
        return true
    }

    private func signal() {
        var one: UInt64 = 1
        while write(wakeFD, &one, 8) < 0 && errno == EINTR {}
    }

    // MARK: - The loop

    /// Runs until the drain has finished; returns on the loop's own thread.
    func run() {
        refreshDate()
        while running {
            let timeout = waitTimeout()
            let count = Epoll.wait(epfd, eventBuffer, capacity: Int32(Self.eventCapacity), timeout: timeout)
            turnStartNanoseconds = SystemMonotonicClock().nanoseconds()
            refreshDate()
            if count < 0 {
                if errno == EINTR { continue }
                shared.logger.error("epoll_wait failed", metadata: ["errno": "\(errno)"])
                break
            }
            for slot in 0..<Int(count) {
                let (events, data) = Epoll.event(eventBuffer, at: slot)
                if data == Self.wakeData {
                    drainInbox()
                } else if data == Self.listenData {
                    acceptConnection()
                } else {
                    let fd = Int32(truncatingIfNeeded: data & 0xFFFF_FFFF)
                    let generation = UInt32(truncatingIfNeeded: data >> 32)
                    if let connection = connection(fd: fd, generation: generation) {
                        connection.handle(events: events)
                        settle(connection)
                    }
                }
            }
            runTimers()
            continueYielded()
            if draining && liveConnections == 0 { running = false }
        }
        shutDownLoop()
    }

    private func waitTimeout() -> Int32 {
        if !continuing.isEmpty { return 0 }  // poll for others' events, then continue the yielded
        var next = timers.nextDeadline ?? Int64.max
        if let resume = acceptResumeAt { next = min(next, resume) }
        if let deadline = drainDeadline { next = min(next, deadline) }
        if next == Int64.max { return -1 }
        // From the turn's start, not the clock read again: a timer fires late by the time the
        // turn took (microseconds; a millisecond or two under load), as with nginx's cached time.
        // The deadlines are idle, header and drain timeouts of seconds.
        return Int32(clamping: max(0, next - now))
    }

    private func connection(fd: Int32, generation: UInt32) -> Connection? {
        guard fd >= 0, Int(fd) < connections.count, let connection = connections[Int(fd)],
            connection.generation == generation
        else { return nil }
        return connection
    }

    /// Asks for `connection` to be continued after this turn's events (it yielded its turn).
    func continueNextTurn(_ connection: Connection) {
        continuing.append(connection)
    }

    private func continueYielded() {
        guard !continuing.isEmpty else { return }
        let turn = continuing
        continuing.removeAll(keepingCapacity: true)
        for connection in turn {
            // Closed (and its descriptor perhaps reused) since it yielded: nothing to continue.
            guard self.connection(fd: connection.fd, generation: connection.generation) === connection else { continue }
            connection.continueTurn()
            settle(connection)
        }
    }

    /// Closes a connection that asked for it, or re-arms its deadline.
    func settle(_ connection: Connection) {
        if connection.closeRequested {
            close(connection)
        } else {
            connection.updateDeadline()
        }
    }

    /// Schedules a wake-up for `connection` at `deadline`.
    func schedule(_ connection: Connection, at deadline: Int64) {
        timers.push(TimerHeap.Entry(deadline: deadline, fd: connection.fd, generation: connection.generation))
    }

    private func runTimers() {
        while let entry = timers.popDue(now: now) {
            guard let connection = connection(fd: entry.fd, generation: entry.generation) else { continue }
            connection.timerFired(entry.deadline)
            settle(connection)
        }
        if let resume = acceptResumeAt, resume <= now {
            acceptResumeAt = nil
            watchListener()
            acceptConnection()
        }
        if let deadline = drainDeadline, deadline <= now {
            drainDeadline = nil
            shared.logger.warning(
                "drain timeout: closing \(liveConnections) connection(s)",
                metadata: ["loop": "\(index)"])
            for case let connection? in connections { close(connection) }
        }
    }

    private func drainInbox() {
        var value: UInt64 = 0
        while read(wakeFD, &value, 8) < 0 && errno == EINTR {}
        let taken = inbox.withLock { inbox -> Inbox in
            let taken = inbox
            inbox.responses.removeAll()
            inbox.adopted.removeAll()
            inbox.drain = false
            inbox.wakePending = false
            return taken
        }
        for (fd, peer) in taken.adopted { register(fd: fd, peer: peer) }
        for (token, response) in taken.responses {
            guard let connection = connection(fd: token.fd, generation: token.generation) else { continue }
            connection.deliver(response, sequence: token.sequence)
            settle(connection)
        }
        if taken.drain && !draining { startDrain() }
    }

    // MARK: - Connections

    func register(fd: Int32, peer: HTTPPeerAddress?) {
        let generation = nextGeneration
        nextGeneration = nextGeneration == UInt32.max ? 1 : nextGeneration + 1
        let connection = Connection(
            fd: fd, generation: generation, id: shared.nextConnectionID(),
            peer: peer, loop: self)
        if Int(fd) >= connections.count {
            connections.append(contentsOf: repeatElement(nil, count: Int(fd) + 1 - connections.count + 64))
        }
        connections[Int(fd)] = connection
        liveConnections += 1
        let data = UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd))
        let events = Epoll.readable | Epoll.writable | Epoll.readHangUp | Epoll.edgeTriggered
        guard Epoll.add(epfd, fd: fd, events: events, data: data) == 0 else {
            shared.logger.error("epoll_ctl ADD failed", metadata: ["errno": "\(errno)"])
            close(connection)
            return
        }
        if draining {
            connection.beginDrain()
        }
        settle(connection)
    }

    /// Closes the connection's descriptor and forgets it.
    func close(_ connection: Connection) {
        guard Int(connection.fd) < connections.count, connections[Int(connection.fd)] === connection else { return }
        connection.tearDown()
        connections[Int(connection.fd)] = nil
        POSIX.closeDescriptor(connection.fd)
        liveConnections -= 1
        assigned.subtract(1, ordering: .relaxed)
        shared.connectionClosed()
    }

    private func startDrain() {
        draining = true
        drainDeadline = now + shared.configuration.drainTimeout.milliseconds
        stopAccepting()
        for case let connection? in connections {
            connection.beginDrain()
            settle(connection)
        }
    }

    private func shutDownLoop() {
        for case let connection? in connections { close(connection) }
        inbox.withLock { $0.closed = true }
        // Responses that raced with the shutdown are dropped; their connections are closed.
        stopAccepting()
        POSIX.closeDescriptor(wakeFD)
        POSIX.closeDescriptor(epfd)
    }

    // MARK: - What every response carries

    /// The id of a request with these header fields: the client's, echoed when acceptable, else
    /// a new one (``HTTPRequestID/none`` when the server has no request-id header).
    func requestID(for headers: HTTPHeaders?) -> HTTPRequestID {
        if let headers { return requestID(echoing: headers) }
        guard !requestIDName.isEmpty else { return .none }
        requestIDCounter &+= 1
        return HTTPRequestID(generated: requestIDPrefix | UInt64(requestIDCounter))
    }

    /// ``requestID(for:)`` of a head's fields, borrowed (made optional for the call, they were
    /// copied: a retain and a release of their buffer and field list).
    func requestID(echoing headers: borrowing HTTPHeaders) -> HTTPRequestID {
        guard !requestIDName.isEmpty else { return .none }
        if let range = headers.firstValueRange(lowercasedName: requestIDName),
            headers.storage.withUnsafeBytes({ HTTPRequestID.isAcceptable(UnsafeRawBufferPointer(rebasing: $0[range])) })
        {
            return HTTPRequestID(.echoed(headers.storage, start: range.lowerBound, end: range.upperBound))
        }
        return requestID(for: nil)
    }

    /// `Server`, `Date`, the hook's constant lines and the request id (the hook's per-request
    /// lines follow, from the caller).
    func appendCommonLines(requestID: HTTPRequestID, to head: inout [UInt8]) {
        head.append(contentsOf: commonLines)
        if shared.requestIDLinePrefix != nil {
            requestID.append(to: &head)
            head.append(0x0D)
            head.append(0x0A)
        }
    }

    /// Reads the clock's second; rebuilds ``commonLines`` when it changed.
    private func refreshDate() {
        guard date.refresh() else { return }
        commonLines = shared.serverLine + date.line + shared.constantHeaderLines + (shared.requestIDLinePrefix ?? [])
    }

    static var lingerDuration: Int64 { lingerMilliseconds }
}
