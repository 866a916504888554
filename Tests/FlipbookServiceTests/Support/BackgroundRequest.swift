import Dispatch
import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Synchronization

/// A request sent at once on a thread of its own, its answer awaited later: for tests that need
/// a request in flight (waiting on an upload or a source session) while they go on.
///
/// Sent from a thread, not from a `Task`: with every suite running at once the few threads of
/// the cooperative pool are often all busy in other tests, and a task started there could wait
/// for seconds before it sent anything. Awaited with a continuation, not a blocking wait: a test
/// blocked on a semaphore holds one of those few threads, and on a loaded machine two of them
/// starved the rest of the suite for long enough that other tests' waiters ran out.
final class BackgroundRequest: Sendable {
    private enum State {
        case pending
        case awaited(CheckedContinuation<HTTPTestResponse, any Error>)
        case answered(Result<HTTPTestResponse, any Error>)
        case taken
    }

    private let state = Mutex(State.pending)

    init(_ service: TestService, _ path: String, headers: [String: String] = [:]) {
        let client = service.client
        Thread.detachNewThread { [self] in
            deliver(Result { try client.get(path, headers: headers) })
        }
    }

    /// The answer; a failure when none came within a minute of asking.
    func answer() async throws -> HTTPTestResponse {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<HTTPTestResponse, any Error>? = state.withLock { state in
                guard case .answered(let result) = state else {
                    state = .awaited(continuation)
                    return nil
                }
                state = .taken
                return result
            }
            if let ready {
                continuation.resume(with: ready)
            } else {
                DispatchQueue.global().asyncAfter(deadline: .now() + 60) { [self] in
                    deliver(.failure(TestFailure("no answer within 60 s")))
                }
            }
        }
    }

    /// Keeps the first result, resuming whoever awaits it.
    private func deliver(_ result: Result<HTTPTestResponse, any Error>) {
        let waiting: CheckedContinuation<HTTPTestResponse, any Error>? = state.withLock { state in
            switch state {
            case .pending:
                state = .answered(result)
                return nil
            case .awaited(let continuation):
                state = .taken
                return continuation
            case .answered, .taken:
                return nil
            }
        }
        waiting?.resume(with: result)
    }
}
