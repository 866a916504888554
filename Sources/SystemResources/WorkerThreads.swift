import Synchronization

/// Threads of their own (``DetachedThread``) that run submitted closures in order of submission:
/// at most `limit` at once, each thread started when a job finds no idle one and ending after
/// `idleSeconds` without work (or once closed). For work that must not queue behind Dispatch's
/// shared pool: that pool keeps about one thread per core for `DispatchQueue.global()`, every
/// `.concurrent` queue and Swift's cooperative tasks together, and adds one a second only while
/// its threads are blocked, not while they compute — an upload verified there, or an S3 lookup
/// waiting on the network, waits for whatever else holds those threads (in a test process, the
/// tests themselves). The worker pool of ingest commits, storage lookups, derived builds and the
/// parallel WebP encoder.
public final class WorkerThreads: @unchecked Sendable {
    // `@unchecked`: `state` is read and written only with `lock` held.
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        /// Index of the next job to run in `jobs` (taken from the front without shifting).
        var next = 0
        var threads = 0
        var idle = 0
        var closed = false

        var queued: Int { jobs.count - next }

        mutating func take() -> (@Sendable () -> Void)? {
            guard next < jobs.count else { return nil }
            let job = jobs[next]
            next += 1
            if next == jobs.count || next >= 1024 {
                jobs.removeFirst(next)
                next = 0
            }
            return job
        }
    }

    /// Guards `state`; idle threads sleep on it.
    private let lock = ConditionLock()
    private var state = State()
    private let name: String
    private let limit: Int
    private let idleSeconds: Double

    /// Runs jobs on at most `limit` threads (at least one) named `name` (Linux keeps 15 bytes).
    public init(name: String, limit: Int, idleSeconds: Double = 10) {
        self.name = name
        self.limit = max(1, limit)
        self.idleSeconds = idleSeconds
    }

    /// Threads running or waiting for work now.
    public var threadCount: Int { lock.withLock { state.threads } }

    /// Runs `job` on one of the threads (never, once closed).
    public func submit(_ job: @escaping @Sendable () -> Void) {
        let startThread = lock.withLock { () -> Bool? in
            guard !state.closed else { return nil }
            state.jobs.append(job)
            guard state.queued > state.idle, state.threads < limit else { return false }
            state.threads += 1
            return true
        }
        guard let startThread else { return }
        if startThread {
            DetachedThread.start(name: name) { [self] in work() }
        } else {
            lock.signal()
        }
    }

    /// Runs `body(i)` for each `i` in `0..<iterations` on up to `limit` threads, the caller's
    /// among them (so the loop finishes even while every thread is busy elsewhere); returns when
    /// all have run.
    public func perform(iterations: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let loop = SharedLoop(iterations: iterations, body)
        for _ in 0..<max(0, min(iterations, limit) - 1) { submit { loop.runAvailable() } }
        loop.runAvailable()
        loop.waitUntilDone()
    }

    /// Lets the threads end once the jobs submitted so far have run.
    public func close() {
        lock.withLock { state.closed = true }
        lock.broadcast()
    }

    private func work() {
        lock.lock()
        while true {
            if let job = state.take() {
                lock.unlock()
                job()
                lock.lock()
                continue
            }
            if state.closed { break }
            state.idle += 1
            let woken = lock.wait(seconds: idleSeconds)
            state.idle -= 1
            if !woken && state.queued == 0 { break }
        }
        state.threads -= 1
        lock.unlock()
    }
}

/// The iterations of one ``WorkerThreads/perform(iterations:_:)``: each thread that joins takes
/// the next index until none is left; the last to finish wakes the caller.
private final class SharedLoop: Sendable {
    private let iterations: Int
    private let body: @Sendable (Int) -> Void
    private let nextIndex = Atomic(0)
    private let finished = Atomic(0)
    private let done = ConditionLock()

    init(iterations: Int, _ body: @escaping @Sendable (Int) -> Void) {
        self.iterations = iterations
        self.body = body
    }

    func runAvailable() {
        while true {
            let index = nextIndex.add(1, ordering: .relaxed).oldValue
            guard index < iterations else { return }
            body(index)
            if finished.add(1, ordering: .acquiringAndReleasing).newValue == iterations {
                done.withLock { done.broadcast() }
            }
        }
    }

    func waitUntilDone() {
        done.withLock {
            while finished.load(ordering: .acquiring) < iterations { done.wait() }
        }
    }
}
