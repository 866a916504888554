import Dispatch
import FlipbookTestSupport
import Foundation

/// A request sent at once on a thread of its own, its answer waited for later: for tests that
/// need a request in flight (waiting on an upload or a source session) while they go on. Not a
/// `Task`: with every suite running at once the few threads of the cooperative pool are often
/// all busy in other tests, and a task started there can wait for seconds before it sends
/// anything (an upload-session test then saw its waiter never arrive).
final class BackgroundRequest: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<HTTPTestResponse, any Error>?

    init(_ service: TestService, _ path: String, headers: [String: String] = [:]) {
        let client = service.client
        Thread.detachNewThread {
            self.result = Result { try client.get(path, headers: headers) }
            self.done.signal()
        }
    }

    /// The answer (at most a minute later).
    func answer() throws -> HTTPTestResponse {
        guard done.wait(timeout: .now() + 60) == .success, let result else { throw TestFailure("no answer") }
        return try result.get()
    }
}
