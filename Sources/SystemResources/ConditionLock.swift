import Glibc  // pthread

/// A mutex and a condition variable (POSIX), for threads that sleep until shared state changes:
/// the frame cache's decode threads, the encode helpers, the memory monitor. Timed waits are
/// measured on `CLOCK_MONOTONIC`, so setting the wall clock neither cuts nor stretches them.
public final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }

    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Unlocks, sleeps until signalled, locks again. (Wakes may be spurious: re-check the state.)
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// As ``wait()``, for at most `seconds`; false when the time ran out.
    @discardableResult
    public func wait(seconds: Double) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = Int64(max(0, seconds) * 1e9) + Int64(deadline.tv_nsec)
        deadline.tv_sec += Int(nanoseconds / 1_000_000_000)
        deadline.tv_nsec = Int(nanoseconds % 1_000_000_000)
        return pthread_cond_timedwait(condition, mutex, &deadline) == 0
    }

    /// Wakes one waiter.
    public func signal() { pthread_cond_signal(condition) }

    /// Wakes every waiter.
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// `body` with the lock held.
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
