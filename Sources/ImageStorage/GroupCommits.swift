import Dispatch
import Synchronization

/// Changes of concurrent writers committed together, one transaction (one `fsync`) for all the
/// changes queued while the previous transaction was being made durable: the listing index's
/// writes (``ListingIndex``), so that a data directory takes more uploads per second than its
/// disk takes `fsync`s. A writer returns once its own change is durable, or failed.
///
/// The first writer to find no commit under way leads: it takes the whole queue, commits it,
/// tells every writer of the batch, then hands the lead to the first writer still queued (so no
/// writer keeps committing others' changes while its own caller waits).
final class GroupCommits<Payload: Sendable, Failure: Error>: Sendable {
    /// One writer's change (`payload`: what the commit applies; a bulk import's batch is one
    /// change). Its fields are written before its semaphore is signalled and read after it is
    /// waited on.
    final class Change: @unchecked Sendable {
        let payload: Payload
        fileprivate var result: Result<Void, Failure>?
        fileprivate var leads = false
        fileprivate let done = DispatchSemaphore(value: 0)

        init(_ payload: Payload) {
            self.payload = payload
        }
    }

    private struct State {
        var queue: [Change] = []
        var busy = false
    }

    private let state = Mutex(State())

    /// Queues `payload` and returns once it is committed: by this thread (with the changes queued
    /// meanwhile, through `commit`, which makes one transaction of a batch) or by another.
    func submit(_ payload: Payload, commit: ([Payload]) -> Result<Void, Failure>) -> Result<Void, Failure> {
        let change = Change(payload)
        let leads = state.withLock { state -> Bool in
            state.queue.append(change)
            if state.busy { return false }
            state.busy = true
            return true
        }
        if !leads {
            change.done.wait()
            if let result = change.result { return result }
            // Handed the lead: this change is still queued.
        }
        let batch = state.withLock { state -> [Change] in
            defer { state.queue.removeAll() }
            return state.queue
        }
        let result = commit(batch.map(\.payload))
        for other in batch where other !== change {
            other.result = result
            other.done.signal()
        }
        state.withLock { state in
            if let next = state.queue.first {
                next.leads = true
                next.done.signal()
            } else {
                state.busy = false
            }
        }
        return result
    }
}
