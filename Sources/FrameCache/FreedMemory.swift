#if canImport(Glibc)
import CMalloc
#endif

/// Hands memory the cache has let go of back to the kernel.
///
/// glibc's malloc keeps freed chunks in its arenas for reuse; encoded frames (tens of KB) and
/// canvases freed in the middle of a heap stay in the process's RSS even though the cache no
/// longer counts them, so RSS would drift above the budget's accounting. Once the cache has
/// freed ``thresholdBytes`` since the last time (and at most every ``minimumIntervalSeconds``),
/// `malloc_trim(0)` returns every whole free page of every arena (it walks the free lists: well
/// under a millisecond for the heaps here).
struct FreedMemory {
    static let thresholdBytes = 4 << 20
    static let minimumIntervalSeconds = 0.25

    private var freedSinceReturn = 0
    private var returnedAt = -Double.infinity

    mutating func note(_ bytes: Int) {
        freedSinceReturn += max(0, bytes)
    }

    /// True when enough was freed, long enough ago, to be worth returning now (the caller
    /// calls ``returnToKernel()`` outside its lock).
    mutating func isDue(now: Double) -> Bool {
        guard freedSinceReturn >= Self.thresholdBytes, now - returnedAt >= Self.minimumIntervalSeconds else { return false }
        freedSinceReturn = 0
        returnedAt = now
        return true
    }

    /// Records a return made regardless of the amount (after a purge).
    mutating func markReturned(now: Double) {
        freedSinceReturn = 0
        returnedAt = now
    }

    static func returnToKernel() {
        #if canImport(Glibc)
        _ = malloc_trim(0)
        #endif
    }
}
