import CMalloc
import Glibc
import Synchronization

/// Hands memory the process has let go of back to the kernel, on one rule for every part that
/// frees heap memory in bulk: the frame cache (evicted frames and decoders on the heap) and the
/// HTTP server (closed connections' buffers). Only bytes that went back to malloc's heap are
/// counted: what was a mapping of its own (``ownMappingBytes``) went back to the kernel already.
///
/// glibc's malloc keeps freed chunks in its arenas for reuse; buffers freed in the middle of a heap
/// stay in the process's RSS although nobody counts them any more, so RSS would drift above what
/// the budgets account for. Once ``thresholdBytes`` were freed since the last return (and at most
/// every ``minimumInterval``), `malloc_trim(0)` returns every whole free page of every arena (it
/// walks the free lists: well under a millisecond for the heaps here). Lock-free: callable from
/// any thread, the event loops included.
public enum ReleasedMemory {
    /// Returned once this much was freed: lower keeps RSS closer to the budgets' accounting and
    /// costs more trims (measured: BENCHMARKS.md, "Playback through the frame cache").
    public static let thresholdBytes = 1 << 20
    /// At most this often, so a burst of frees costs one trim.
    public static let minimumInterval: Duration = .milliseconds(20)

    /// The process's one count.
    static let rule = Rule(
        thresholdBytes: thresholdBytes, minimumInterval: minimumInterval,
        clock: SystemMonotonicClock())

    /// Counts `bytes` as freed and returns memory to the kernel now if that is due. Do not call
    /// it under a lock others wait for: use ``noteIsDue(_:)`` there and ``returnToKernel()``
    /// after letting go.
    public static func note(_ bytes: Int) {
        if noteIsDue(bytes) { returnToKernel() }
    }

    /// Counts `bytes` as freed; true when memory should be returned now (once: the caller that
    /// gets true does it, with ``returnToKernel()``).
    public static func noteIsDue(_ bytes: Int) -> Bool {
        rule.noteIsDue(bytes)
    }

    /// Starts counting afresh: the caller returns memory now, whatever was counted (after a
    /// purge), with ``returnToKernel()``.
    public static func markReturned() {
        rule.markReturned()
    }

    /// The counting behind ``ReleasedMemory``: bytes freed since the last return, and when that
    /// was, on a monotonic clock.
    final class Rule: Sendable {
        let thresholdBytes: Int
        let minimumInterval: Int64
        let clock: any MonotonicClock
        private let pending = Atomic<Int>(0)
        private let returnedAt = Atomic<Int64>(Int64.min / 2)

        init(thresholdBytes: Int, minimumInterval: Duration, clock: any MonotonicClock) {
            self.thresholdBytes = thresholdBytes
            self.minimumInterval = minimumInterval.nanoseconds
            self.clock = clock
        }

        func noteIsDue(_ bytes: Int) -> Bool {
            let total = pending.add(max(0, bytes), ordering: .relaxed).newValue
            guard total >= thresholdBytes else { return false }
            let now = clock.nanoseconds()
            let last = returnedAt.load(ordering: .relaxed)
            guard now - last >= minimumInterval else { return false }
            // One caller wins the return; the others' bytes are returned with it.
            guard returnedAt.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged else {
                return false
            }
            pending.store(0, ordering: .relaxed)
            return true
        }

        func markReturned() {
            pending.store(0, ordering: .relaxed)
            returnedAt.store(clock.nanoseconds(), ordering: .relaxed)
        }
    }

    /// `malloc_trim(0)`.
    public static func returnToKernel() {
        _ = malloc_trim(0)
    }

    /// Allocations at least this large get their own mapping, returned to the kernel the moment
    /// they are freed, whatever else the heap holds. 4 MiB: above the buffers an encode allocates
    /// and frees for every frame — libwebp's lossless encoder a 1 MiB hash table about four times
    /// — which as mappings of their own were mapped, zeroed page by page and unmapped every time:
    /// 16.5% of the server's CPU in page faults in the renditions benchmark at 128 KiB, and 2 MiB
    /// did not help there (BENCHMARKS.md, "Renditions: real time"). Canvases of 1024×1024 and
    /// more still get mappings of their own.
    public static let ownMappingBytes: Int32 = 4 << 20

    /// Free memory at the top of a heap kept for the next allocation instead of handed back on
    /// the free that makes it: 2 MiB, room for the encoder's 1 MiB table. At glibc's default
    /// (128 KiB) that table, freed at the top of the heap once anything was allocated in its old
    /// place, was handed back and faulted in again by the next encode. What is kept goes back at
    /// the next trim of ``note(_:)``.
    public static let keptTopBytes: Int32 = 2 << 20

    /// Sets glibc's allocator up for a process whose memory budgets bound: allocations of
    /// ``ownMappingBytes`` or more are mapped on their own (by default glibc raises that
    /// threshold to the largest block freed so far, up to 32 MiB, so after the first large canvas
    /// every buffer up to its size lands in the heaps, between the small PNGs the cache keeps, and
    /// the holes they leave stay resident); smaller ones come from the heaps, whose freed pages
    /// go back to the kernel by ``note(_:)``'s trims, the canvases the frame cache drops counted
    /// (``FreedMemory`` in FrameCache). And at most ``arenas`` heaps. Call once, at start-up,
    /// before threads allocate.
    public static func configureProcessAllocator() {
        _ = mallopt(M_MMAP_THRESHOLD, ownMappingBytes)
        _ = mallopt(M_TRIM_THRESHOLD, keptTopBytes)
        _ = mallopt(M_ARENA_MAX, Int32(arenas))
    }

    /// The heaps (glibc arenas) malloc may keep: one per usable core, two at least — no more
    /// threads than that allocate at once. glibc's default, eight per core, gives each event loop
    /// and decode thread a heap of its own, and the holes frames leave when they are evicted stay
    /// resident in each: with 30,000 cold two-frame images in a 256 MiB cache (2 cores,
    /// docs/benchmarks/scale.md), heap held but free fell from 23 to 13 MB, RSS from 358 to 348 MB.
    public static var arenas: Int { max(2, CPULimit.usableCores) }
}

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
