import Glibc

/// Accepting (loop 0, the acceptor): takes every connection the listening socket has ready and
/// deals them round-robin to the loops; over the connection limit, answers 503 and closes at once;
/// out of descriptors or memory, backs off for ``EventLoop/acceptBackoffMilliseconds`` instead of
/// spinning on a ready socket.
extension EventLoop {
    /// Accepts until the listening socket has nothing ready (or accepting must back off).
    func acceptConnections() {
        guard listenFD >= 0, acceptResumeAt == nil else { return }
        while true {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutableBytes(of: &storage) { Epoll.accept(listenFD, $0.baseAddress!, &length) }
            if fd < 0 {
                let code = errno
                switch code {
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    return
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors or memory: back off instead of spinning on a ready socket.
                    acceptResumeAt = now + Self.acceptBackoffMilliseconds
                    if now - lastAcceptWarning > 1000 {
                        lastAcceptWarning = now
                        shared.logger.warning(
                            "accept: out of resources, backing off",
                            metadata: ["errno": "\(code)"])
                    }
                    return
                default:
                    shared.logger.error("accept failed", metadata: ["errno": "\(code)"])
                    acceptResumeAt = now + Self.acceptBackoffMilliseconds
                    return
                }
            }
            let peer = POSIX.peerAddress(storage)
            guard shared.connectionOpened() else {
                refuse(fd, peer: peer)
                continue
            }
            POSIX.setNoDelay(fd)
            let target = peers[nextPeer]
            nextPeer = nextPeer + 1 == peers.count ? 0 : nextPeer + 1
            if target === self {
                register(fd: fd, peer: peer)
            } else {
                target.adopt(fd: fd, peer: peer)
            }
        }
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
