/// How a connection ends: its phases, and what the peer's close or a failure does.
extension Connection {
    enum Phase {
        /// Reading requests and writing responses.
        case active
        /// The last response is queued; once written, the write side is shut down.
        case closingAfterWrite
        /// Write side shut down; reading and discarding until the peer closes or a timer fires.
        case lingering
    }

    /// The peer closed its side (a read returned 0).
    func peerClosed() {
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
}
