import Dispatch
import Synchronization
import SystemResources

/// A few threads of their own (``DetachedThread``) that run submitted closures in order of
/// submission, until closed. For work that must not queue behind Dispatch's pool (which holds
/// about one thread per core, some of them blocked in waits of their own).
final class WorkerThreads: Sendable {
    private let jobs = Mutex<(queue: [@Sendable () -> Void], closed: Bool)>(([], false))
    private let available = DispatchSemaphore(value: 0)
    private let count: Int

    /// Starts `count` threads (at least one).
    init(count: Int) {
        self.count = max(1, count)
        for _ in 0..<self.count {
            DetachedThread.start { [self] in
                while let job = nextJob() { job() }
            }
        }
    }

    /// Runs `job` on one of the threads (never, once closed).
    func submit(_ job: @escaping @Sendable () -> Void) {
        let accepted = jobs.withLock { jobs -> Bool in
            guard !jobs.closed else { return false }
            jobs.queue.append(job)
            return true
        }
        if accepted { available.signal() }
    }

    /// Lets the threads end once the jobs submitted so far have run.
    func close() {
        let first = jobs.withLock { jobs -> Bool in
            defer { jobs.closed = true }
            return !jobs.closed
        }
        if first { for _ in 0..<count { available.signal() } }
    }

    private func nextJob() -> (@Sendable () -> Void)? {
        available.wait()
        return jobs.withLock { jobs in jobs.queue.isEmpty ? nil : jobs.queue.removeFirst() }
    }
}
