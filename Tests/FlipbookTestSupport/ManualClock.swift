import Synchronization
import SystemResources

/// A monotonic clock the test moves by hand, so schedules (cache windows, pressure steps, record
/// rechecks, freed-memory returns) are driven without sleeping. Starts at 1000 s.
public final class ManualClock: MonotonicClock {
    private let now = Mutex<Int64>(1_000 * 1_000_000_000)

    public init() {}

    public func nanoseconds() -> Int64 { now.withLock { $0 } }

    /// Moves the clock on by `seconds`.
    public func advance(by seconds: Double) {
        now.withLock { $0 += Int64((seconds * 1e9).rounded()) }
    }
}
