import SystemResources

/// What the cache lets go of (evicted frames, dropped decoders), counted towards the process's
/// one rule for handing freed memory back to the kernel (``ReleasedMemory``: after every MiB, at
/// most every 20 ms, and at once after a purge), so that RSS follows the cache's accounting.
///
/// The cache counts under its lock and returns memory outside it: ``note(_:)`` records that a
/// return fell due, ``isDue(now:)`` hands that over once. The rule keeps its own monotonic time
/// (it is shared with the HTTP server and decoding); the cache's clock is not used.
struct FreedMemory {
    private var due = false

    mutating func note(_ bytes: Int) {
        if ReleasedMemory.noteIsDue(bytes) { due = true }
    }

    /// True (once) when memory should be returned now; the caller calls ``returnToKernel()``
    /// outside its lock.
    mutating func isDue(now: Double) -> Bool {
        defer { due = false }
        return due
    }

    /// A return made regardless of the amount (after a purge).
    mutating func markReturned(now: Double) {
        due = false
        ReleasedMemory.markReturned()
    }

    static func returnToKernel() {
        ReleasedMemory.returnToKernel()
    }
}

extension FrameCache {
    /// Sets the process's allocator up so that RSS follows the budgets' accounting (see
    /// ``ReleasedMemory/configureProcessAllocator()``). Call once, at start-up.
    public static func configureProcessAllocator() {
        ReleasedMemory.configureProcessAllocator()
    }
}
