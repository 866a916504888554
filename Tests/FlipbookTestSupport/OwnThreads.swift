import SystemResources
import Testing

/// Runs a suite's tests on threads of their own instead of Swift's cooperative pool (one thread
/// per core, shared by every test of the process): `@Suite(.ownThreads)`. For tests that block
/// (synchronous HTTP exchanges, a subprocess, a semaphore) and tests whose waits span an `await`
/// (a request held until bytes land, an origin's slice): on the pool, a blocking test holds a
/// thread every other test needs, and a test resumed there waits for whatever holds them — tens
/// of seconds on a loaded machine, longer than such a wait may take. Here each job of the test's
/// task gets a thread (up to 64 at once; `make test` runs at most 8 test cases at a time), and
/// the test's child tasks inherit it.
public struct OwnThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
    }
}

extension Trait where Self == OwnThreadsTrait {
    /// The suite's tests run on threads of their own (``OwnThreadsTrait``).
    public static var ownThreads: Self { OwnThreadsTrait() }
}

/// The task executor of ``OwnThreadsTrait``: each job runs on a thread of a ``WorkerThreads``
/// pool, started when none is idle.
final class TestThreads: TaskExecutor {
    static let shared = TestThreads()
    private let threads = WorkerThreads(name: "test-body", limit: 64, idleSeconds: 5)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        threads.submit { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
