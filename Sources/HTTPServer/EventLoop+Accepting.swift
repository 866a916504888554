import Glibc

/// Accepting: a loop woken for the listening socket accepts one connection (the socket is
/// level-triggered, so one still queued wakes a loop again, an idle one first), keeps it or hands
/// it to a loop that holds fewer, and lets a less busy loop be woken first next time; over
/// the connection limit it answers 503 and closes at once; out of descriptors or memory it takes
/// the socket out of its epoll for ``EventLoop/acceptBackoffMilliseconds`` instead of spinning on
/// a ready socket.
extension EventLoop {
    static let acceptBackoffMilliseconds: Int64 = 100

    /// Accepts the next connection the listening socket has ready, if any (another loop may have
    /// taken it first).
    func acceptConnection() {
        guard let listener, acceptResumeAt == nil else { return }
        while true {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutableBytes(of: &storage) { Epoll.accept(listener.fd, $0.baseAddress!, &length) }
            if fd < 0 {
                let code = errno
                switch code {
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    return
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    backOff()
                    if now - lastAcceptWarning > 1000 {
                        lastAcceptWarning = now
                        shared.logger.warning(
                            "accept: out of resources, backing off",
                            metadata: ["errno": "\(code)"])
                    }
                    return
                default:
                    // The drain stopped the socket listening (EINVAL); this loop hears of it next.
                    if listener.isListening {
                        shared.logger.error("accept failed", metadata: ["errno": "\(code)"])
                    }
                    backOff()
                    return
                }
            }
            let peer = POSIX.peerAddress(storage)
            guard shared.connectionOpened() else {
                refuse(fd, peer: peer)
                return
            }
            let target = leastLoaded()
            target.assigned.add(1, ordering: .relaxed)
            if target === self {
                register(fd: fd, peer: peer)
                if leastLoaded() !== self { takeLastTurn() }
            } else {
                target.adopt(fd: fd, peer: peer)
                takeLastTurn()
            }
            return
        }
    }

    /// This loop, unless another holds fewer connections: a burst of keep-alive connections that
    /// one loop accepts is still shared evenly, while a connection that finds the loops even
    /// (one-shot clients, the usual case) stays where it was accepted, with no hand-over.
    private func leastLoaded() -> EventLoop {
        var target = self
        var fewest = assigned.load(ordering: .relaxed)
        for loop in peers where loop !== self {
            let count = loop.assigned.load(ordering: .relaxed)
            if count < fewest {
                target = loop
                fewest = count
            }
        }
        return target
    }

    /// Puts this loop, which holds more connections than another, at the back of the listening
    /// socket's queue of waiters. The kernel wakes the first idle loop in that queue, so without
    /// this the same loop would be woken for every connection that finds it idle (8 keep-alive
    /// connections opened one after another all landed on one loop of two), and would hand over
    /// every one-shot connection while another loop holds a kept one.
    private func takeLastTurn() {
        unwatchListener()
        watchListener()
    }

    /// Stops watching the listening socket until ``EventLoop/acceptBackoffMilliseconds`` from now
    /// (a level-triggered socket left in the epoll would wake the loop again at once).
    private func backOff() {
        acceptResumeAt = now + Self.acceptBackoffMilliseconds
        unwatchListener()
    }

    private static let refusal = HTTPResponse.problem(
        .serviceUnavailable,
        detail: "The server has too many open connections.")

    /// Answers a connection over the limit with 503 and closes it without keeping any state. The
    /// answer carries what every response does (the hook's lines, a request id) and is reported
    /// to the hook like any other.
    private func refuse(_ fd: Int32, peer: HTTPPeerAddress?) {
        let problem = Self.refusal
        let requestID = requestID(for: nil)
        let record = shared.hook.map { _ in
            HTTPAccessRecord(
                method: Connection.unknownMethod, path: "-", route: nil, routeIndex: -1,
                requestHeaders: HTTPHeaders(), requestID: requestID, remoteAddress: peer, connectionID: 0,
                loop: index, status: problem.status.code, bodyBytes: problem.body.count, duration: .zero)
        }
        var bytes: [UInt8] = []
        ResponseSerializer.appendStatusAndFields(of: problem, sendsBody: true, to: &bytes)
        appendCommonLines(requestID: requestID, to: &bytes)
        if let hook = shared.hook, let record { hook.appendHeaderLines(for: record, to: &bytes) }
        ResponseSerializer.appendEnd(.close, to: &bytes)
        bytes += problem.body
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        shutdown(fd, Int32(SHUT_WR))
        var scratch = [UInt8](repeating: 0, count: 4096)
        _ = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        POSIX.closeDescriptor(fd)
        if let hook = shared.hook, let record { hook.responseQueued(record) }
    }
}
