import SystemResources

/// The threads that share one composite's encodes with the decode thread that made it
/// (``FrameCache``'s `encodeInParallel`). The cache's own, started with it and stopped with it,
/// at the decode threads' nice value: the process's shared dispatch pool, used before, gave the
/// encodes one lane whenever other work held its threads (a derived product's build, storage
/// calls, another test suite's blocked items), so how parallel a composite's encodes ran
/// depended on what else the process was doing.
final class EncodeHelpers: @unchecked Sendable {
    /// One composite's encodes: indices handed out one at a time to whoever asks next, the
    /// caller included. Guarded by the helpers' condition.
    private final class Batch {
        let count: Int
        var next = 0
        var finished = 0
        /// Helpers that may still join (lanes less the caller's).
        var seats: Int
        /// Cleared before ``EncodeHelpers/run(_:lanes:_:)`` returns: the closure does not escape it.
        var body: ((Int) -> Void)?

        init(count: Int, seats: Int, body: @escaping (Int) -> Void) {
            self.count = count
            self.seats = seats
            self.body = body
        }

        var hasWorkLeft: Bool { next < count }
    }

    /// How many helper threads there are.
    let count: Int
    private let condition = ConditionLock()
    private var open: [Batch] = []
    private var stopped = false

    /// Starts `count` threads at the process's nice value plus `niceOffset`.
    init(count: Int, niceOffset: Int32, name: String = "flipbook-encode") {
        self.count = max(0, count)
        for n in 0..<self.count {
            DetachedThread.start(name: "\(name)-\(n)", niceOffset: niceOffset) { [self] in helperLoop() }
        }
    }

    /// Lets the threads end once they finish what they are doing; later calls run on their
    /// caller alone.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Calls `body` once for every index in `0..<count`, on this thread and on up to `lanes − 1`
    /// helpers that are free, and returns when every call has returned. Helpers busy with
    /// another decode thread's encodes do not join: this thread then does more of them itself.
    func run(_ count: Int, lanes: Int, _ body: (Int) -> Void) {
        let seats = min(lanes - 1, self.count, count - 1)
        guard seats > 0 else {
            for i in 0..<count { body(i) }
            return
        }
        withoutActuallyEscaping(body) { body in
            let batch = Batch(count: count, seats: seats, body: body)
            condition.lock()
            open.append(batch)
            condition.broadcast()
            condition.unlock()
            work(on: batch)
            condition.lock()
            while batch.finished < batch.count { condition.wait() }
            open.removeAll { $0 === batch }
            batch.body = nil
            condition.unlock()
        }
    }

    private func helperLoop() {
        condition.lock()
        while !stopped {
            guard let batch = open.first(where: { $0.seats > 0 && $0.hasWorkLeft }) else {
                condition.wait()
                continue
            }
            batch.seats -= 1
            condition.unlock()
            work(on: batch)
            condition.lock()
        }
        condition.unlock()
    }

    /// Takes and calls `batch`'s indices until none is left.
    private func work(on batch: Batch) {
        while callNext(of: batch) {
            condition.lock()
            batch.finished += 1
            if batch.finished == batch.count { condition.broadcast() }
            condition.unlock()
        }
    }

    /// Calls `batch`'s body with the next index not taken; false when none is left. The body is
    /// let go of when this returns, before the call is counted as finished.
    private func callNext(of batch: Batch) -> Bool {
        condition.lock()
        guard batch.hasWorkLeft, let body = batch.body else {
            condition.unlock()
            return false
        }
        let i = batch.next
        batch.next += 1
        condition.unlock()
        body(i)
        return true
    }
}
