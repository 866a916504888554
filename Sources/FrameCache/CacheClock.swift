#if canImport(Glibc)
import Glibc
#endif

/// A monotonic clock in seconds. The cache reads time only through this, so tests can drive
/// the memory-pressure schedule without sleeping.
public protocol CacheClock: Sendable {
    func now() -> Double
}

/// The process's monotonic clock.
public struct SystemCacheClock: CacheClock {
    public init() {}

    public func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
