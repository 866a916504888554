import Glibc

/// The clock every interval, deadline and schedule in Flipbook is measured on: the process's
/// monotonic clock, which never steps back when the wall clock is set. Code that decides by time
/// (the frame cache's windows and pressure schedule, the store's record rechecks, the freed-memory
/// rule) takes one of these, so tests move time by hand instead of sleeping.
public protocol MonotonicClock: Sendable {
    /// Nanoseconds since an arbitrary fixed point; never decreases.
    func nanoseconds() -> Int64
}

extension MonotonicClock {
    /// ``nanoseconds()`` in seconds.
    public func seconds() -> Double { Double(nanoseconds()) / 1e9 }

    /// ``nanoseconds()`` in whole milliseconds.
    public func milliseconds() -> Int64 { nanoseconds() / 1_000_000 }
}

/// `CLOCK_MONOTONIC`: the clock the running service uses.
public struct SystemMonotonicClock: MonotonicClock {
    public init() {}

    public func nanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
