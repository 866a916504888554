import Dispatch
import SourceRules
import Synchronization
import SystemResources

/// A host-name lookup that fits in the time a fetch has left. `getaddrinfo` takes no deadline
/// and cannot be cancelled, so the lookup runs on a thread of its own and the fetch waits for it
/// at most `milliseconds`; a lookup that outlives its wait ends (or hangs) on that thread with
/// nobody waiting, and its answer is dropped — the fetch never connects anywhere on the strength
/// of a late answer. Threads rather than a dispatch queue: a hung lookup must not hold one of
/// the few threads the process's dispatch queues share. At most ``maxPending`` lookups are under
/// way at once, so a resolver that hangs costs a bounded number of threads; past that a lookup
/// is not started and the fetch times out at once.
enum BoundedLookup {
    /// Twice ``SourceServices/maxConcurrentFetches``: every fetch slot can wait on a lookup while
    /// as many abandoned ones still hang.
    static let maxPending = 64
    private static let pending = Atomic<Int>(0)

    /// Lookups started and not yet returned (abandoned ones included), for tests.
    static var pendingCount: Int { pending.load(ordering: .relaxed) }

    /// The resolver's addresses of `name`, or nil when it did not answer within `milliseconds`
    /// (or too many lookups are hanging already).
    static func addresses(of name: String, using resolver: any SourceResolver, withinMilliseconds milliseconds: Int)
        -> [IPAddress]?
    {
        guard milliseconds > 0 else { return nil }
        let (_, started) = pending.add(1, ordering: .relaxed)
        guard started <= maxPending else {
            pending.subtract(1, ordering: .relaxed)
            return nil
        }
        let answer = Answer()
        DetachedThread.start(name: "flipbook-lookup") {
            answer.set(resolver.addresses(of: name))
            pending.subtract(1, ordering: .relaxed)
        }
        guard answer.ready.wait(timeout: .now() + .milliseconds(milliseconds)) == .success else { return nil }
        return answer.addresses
    }

    /// Where the lookup's thread leaves its answer.
    private final class Answer: Sendable {
        let ready = DispatchSemaphore(value: 0)
        private let found = Mutex<[IPAddress]>([])
        var addresses: [IPAddress] { found.withLock { $0 } }

        func set(_ addresses: [IPAddress]) {
            found.withLock { $0 = addresses }
            ready.signal()
        }
    }
}
