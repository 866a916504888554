/// Deadlines and the graceful drain of a connection: the one timer that applies to its state
/// (head, body, blocked write, keep-alive idle, linger) and what happens when it fires.
extension Connection {
    /// Recomputes the one deadline that applies to the connection's state.
    func updateDeadline() {
        // The loop borrowed (``withLoop(_:)``): its shared part was retained for the timeouts.
        withLoop { loop in
            var next: Int64 = 0
            let shared = loop.shared
            switch phase {
            case .lingering:
                next = lingerUntil
            case .active, .closingAfterWrite:
                if writeBlockedSince != 0 {
                    next = writeBlockedSince + shared.writeIdleTimeoutMilliseconds
                } else if current != nil && bodyActivityAt != 0 {
                    next = bodyActivityAt + shared.bodyReadIdleTimeoutMilliseconds
                } else if headStartedAt != 0 {
                    next = headStartedAt + shared.headerReadTimeoutMilliseconds
                } else if inFlight.isEmpty && current == nil && phase == .active {
                    let idle =
                        requestCount == 0 ? shared.headerReadTimeoutMilliseconds : shared.keepAliveIdleTimeoutMilliseconds
                    next = idleSince + idle
                }
            }
            deadline = next
            if next != 0 && next < scheduledAt {
                scheduledAt = next
                loop.schedule(self, at: next)
            }
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
                closeRequested = true  // idle keep-alive connection
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
