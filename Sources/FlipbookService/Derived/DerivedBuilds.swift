import Dispatch
import Synchronization
import SystemResources

/// Runs builds of products, one per key at a time: a request for a product already being built
/// waits for that build instead of starting another (coalescing). At most `concurrency` builds
/// run at once, on threads of their own (never on an event loop, nor on Dispatch's shared pool:
/// see ``WorkerThreads``); the others wait in line here, not on a semaphore inside a queued
/// block, where each would hold a thread. Each also reserves its memory from the
/// decode-memory budget before it allocates. A failed build's answer is remembered for
/// a while (``failureSeconds``), so a product over a limit is not rebuilt by every request (not
/// a busy budget's, nor a product the shared store did not have yet).
final class DerivedBuilds: Sendable {
    typealias Completion = @Sendable (Result<Void, DerivedFailure>) -> Void
    typealias Work = @Sendable () -> Result<Void, DerivedFailure>

    private struct State {
        var waiting: [String: [Completion]] = [:]
        var failures: [String: (failure: DerivedFailure, at: DispatchTime)] = [:]
        var started = 0
        var coalesced = 0
        /// Builds running, at most `concurrency`; the builds started past it, in order.
        var running = 0
        var queued: [(key: String, work: Work)] = []
    }

    /// How long a failed build's answer is given again without building.
    static let failureSeconds = 30.0

    private let state = Mutex(State())
    private let workers: WorkerThreads
    private let concurrency: Int

    init(concurrency: Int) {
        self.concurrency = max(1, concurrency)
        workers = WorkerThreads(name: "derived-build", limit: self.concurrency)
    }

    /// Builds started, and requests that joined a build already under way.
    func counts() -> (started: Int, coalesced: Int) {
        state.withLock { ($0.started, $0.coalesced) }
    }

    /// Calls `completion` when the product `key` has been made by `work` — by a build this call
    /// starts, or by the one already under way.
    func run(_ key: String, work: @escaping Work, completion: @escaping Completion) {
        enum Decision {
            case start, join, queue
            case failed(DerivedFailure)
        }
        let decision = state.withLock { state -> Decision in
            if let failed = state.failures[key] {
                if DispatchTime.now().uptimeNanoseconds - failed.at.uptimeNanoseconds < UInt64(Self.failureSeconds * 1e9) {
                    return .failed(failed.failure)
                }
                state.failures[key] = nil
            }
            if state.waiting[key] != nil {
                state.waiting[key]!.append(completion)
                state.coalesced += 1
                return .join
            }
            state.waiting[key] = [completion]
            state.started += 1
            guard state.running < concurrency else {
                state.queued.append((key, work))
                return .queue
            }
            state.running += 1
            return .start
        }
        switch decision {
        case .join, .queue: return
        case .failed(let failure): completion(.failure(failure))
        case .start: workers.submit { [self] in build(key, work) }
        }
    }

    /// Runs the build of `key`, answers its waiters, then the builds queued meanwhile, in order,
    /// until none is left (its slot is given back then).
    private func build(_ key: String, _ work: @escaping Work) {
        var next: (key: String, work: Work)? = (key, work)
        while let (key, work) = next {
            let result = work()
            let waiters = state.withLock { state -> [Completion] in
                if case .failure(let failure) = result, failure != .busy, failure != .notShared {
                    if state.failures.count >= 1024 { state.failures.removeAll() }
                    state.failures[key] = (failure, .now())
                }
                return state.waiting.removeValue(forKey: key) ?? []
            }
            for waiter in waiters { waiter(result) }
            next = state.withLock { state in
                guard !state.queued.isEmpty else {
                    state.running -= 1
                    return nil
                }
                return state.queued.removeFirst()
            }
        }
    }

    /// Forgets remembered failures of keys starting with `prefix` (an image was deleted).
    func forgetFailures(prefix: String) {
        state.withLock { state in
            for key in state.failures.keys where key.hasPrefix(prefix) { state.failures[key] = nil }
        }
    }
}
