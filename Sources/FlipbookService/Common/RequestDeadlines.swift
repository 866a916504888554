import Dispatch

/// Ends the waits that run out: a request waiting for something (an upload's frame, a product
/// being built) is answered at its deadline from a serial queue of this type's own. Not from
/// Dispatch's global queues: their pool holds about one thread per core and adds one a second
/// at most, so under load a deadline queued there behind CPU-bound ingests and builds, or
/// blocked storage calls, fired minutes late. A serial queue is given a thread whenever it has
/// work (Dispatch's overcommitting pool), so a deadline waits only for the ones before it.
final class RequestDeadlines: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `expire` when `seconds` have passed. It must be short (answer, or hand the answer on):
    /// the deadlines after it wait for it.
    func after(_ seconds: Double, _ expire: @escaping @Sendable () -> Void) {
        queue.asyncAfter(deadline: .now() + seconds, execute: expire)
    }
}
