import Dispatch
import Synchronization
import SystemResources

/// A piece of work run once, by whichever thread comes first: a worker it was handed to, or a
/// thread that needs its result (``result()``) or has nothing better to do
/// (``runIfUnstarted()``). Lets a caller that must wait for one result spend the wait on work
/// no thread has started instead of idling.
final class DeferredWork<Value: Sendable>: Sendable {
    private enum State {
        case unstarted(@Sendable () throws -> Value)
        case running
        case finished(Result<Value, any Error>)
    }

    private let state: Mutex<State>
    /// Left when the work finishes (entered at creation unless already finished).
    private let done = DispatchGroup()

    init(_ work: @escaping @Sendable () throws -> Value) {
        state = Mutex(.unstarted(work))
        done.enter()
    }

    init(finished result: Result<Value, any Error>) {
        state = Mutex(.finished(result))
    }

    /// Hands the work to one of `threads` (it runs there unless taken first).
    func start(on threads: WorkerThreads) {
        threads.submit { self.runIfUnstarted() }
    }

    /// True once the work has run (or failed).
    var isFinished: Bool {
        state.withLock { state in
            if case .finished = state { return true }
            return false
        }
    }

    /// Runs the work here unless another thread has started it.
    func runIfUnstarted() {
        let work: (@Sendable () throws -> Value)? = state.withLock { state in
            guard case .unstarted(let work) = state else { return nil }
            state = .running
            return work
        }
        guard let work else { return }
        let result = Result { try work() }
        state.withLock { $0 = .finished(result) }
        done.leave()
    }

    /// The work's value: run here if no thread has started it, else waited for.
    func result() throws -> Value {
        runIfUnstarted()
        done.wait()
        return try state.withLock { state -> Result<Value, any Error> in
            guard case .finished(let result) = state else { preconditionFailure("waited for unfinished work") }
            return result
        }.get()
    }

    /// Makes sure no thread is or will be running the work: takes it if unstarted (and drops
    /// it), else waits for the thread that has it.
    func cancelOrWait() {
        let taken = state.withLock { state -> Bool in
            guard case .unstarted = state else { return false }
            state = .finished(.failure(CancellationError()))
            return true
        }
        if taken { done.leave() } else { done.wait() }
    }
}
