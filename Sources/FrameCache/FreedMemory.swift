import SystemResources

/// What the cache lets go of (evicted frames, dropped decoders) that goes back to malloc's heap,
/// counted towards the process's one rule for handing freed memory back to the kernel
/// (``ReleasedMemory``: after every MiB, at most every 20 ms, and at once after a purge), so that
/// RSS follows the cache's accounting.
///
/// Only heap bytes count: a frame in the memory file (``FrameArena``) goes back to the kernel
/// when its slot's pages are punched out, and a canvas (or checkpoint) of at least
/// ``ReleasedMemory/ownMappingBytes`` is a mapping of its own, unmapped when freed. Counting
/// those too ran `malloc_trim` up to 50 times a second in bench-playback for nothing to trim, and
/// every trim's pages were faulted back in by the next decode.
///
/// The cache counts under its lock and returns memory outside it: ``note(heapBytes:)`` records
/// that a return fell due, ``isDue(now:)`` hands that over once. The rule keeps its own monotonic
/// time (it is shared with the HTTP server); the cache's clock is not used.
struct FreedMemory {
    private var due = false
    /// Heap bytes counted so far (for tests).
    private(set) var heapBytesFreed = 0

    /// Counts `bytes` given back to the heap.
    mutating func note(heapBytes bytes: Int) {
        guard bytes > 0 else { return }
        heapBytesFreed += bytes
        if ReleasedMemory.noteIsDue(bytes) { due = true }
    }

    /// What letting go of `frame` gives back to the heap: its PNG unless it is in the memory
    /// file, and what the client attached to it.
    static func heapBytes(of frame: CachedFrame) -> Int {
        (frame.bytes.file == nil ? frame.bytes.slotBytes : 0) + (frame.attachment?.byteCount ?? 0)
    }

    /// What letting go of `bytes` of a decoder's canvases (canvas and checkpoints, each
    /// `canvasBytes`) gives back to the heap: nothing when a canvas is mapped on its own.
    static func heapBytes(ofCanvases bytes: Int, canvasBytes: Int) -> Int {
        canvasBytes >= Int(ReleasedMemory.ownMappingBytes) ? 0 : max(0, bytes)
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
