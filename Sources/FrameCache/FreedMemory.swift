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
    /// Returned once this much was freed. Lower is closer to the accounting and costs more
    /// trims; in bench-playback (≈ 400 frames made and evicted a second) 1 MiB every 20 ms at
    /// most kept peak RSS 5 MiB lower than 4 MiB every 250 ms, for at most 0.1 ms more CPU
    /// per decode (within the noise of the run).
    static let thresholdBytes = 1 << 20
    static let minimumIntervalSeconds = 0.02

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

    /// Allocations at least this large get their own mapping, returned to the kernel the
    /// moment they are freed, whatever else the heap holds.
    static let ownMappingBytes: Int32 = 128 << 10

    /// Sets glibc's allocator up for a process whose memory the cache bounds: allocations of
    /// ``ownMappingBytes`` or more — canvases, decoded frames, encode buffers — are mapped on
    /// their own. By default glibc raises that threshold to the largest block freed so far, so
    /// after the first canvas every canvas-sized buffer lands in the heaps, between the small
    /// PNGs the cache keeps, and the holes they leave stay resident. Costs a few page faults
    /// per frame (bench-playback: 2.1 instead of 2.0 ms of CPU per decode) and keeps peak RSS
    /// within the budget's 10% (34 MiB of heap over the baseline instead of 39 at a 28.9 MiB budget).
    /// Call once, at start-up, before the cache is busy.
    static func configureProcessAllocator() {
        #if canImport(Glibc)
        _ = mallopt(M_MMAP_THRESHOLD, ownMappingBytes)
        #endif
    }

    static func returnToKernel() {
        #if canImport(Glibc)
        _ = malloc_trim(0)
        #endif
    }
}

extension FrameCache {
    /// Sets the process's allocator up so that RSS follows the cache's accounting (see
    /// `FreedMemory.configureProcessAllocator`). Call once, at start-up.
    public static func configureProcessAllocator() {
        FreedMemory.configureProcessAllocator()
    }
}
