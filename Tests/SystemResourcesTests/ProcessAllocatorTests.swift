import Glibc
import Testing

@testable import SystemResources

/// What ``ReleasedMemory/configureProcessAllocator()`` sets up for the buffers an encode allocates
/// and frees for every frame (libwebp's lossless encoder: a 1 MiB hash table about four times a
/// frame): served from the heap again each time, not mapped and faulted in page by page afresh.
@Suite struct ProcessAllocatorTests {
    /// Minor page faults of the calling thread so far (`RUSAGE_THREAD`, 1: a GNU extension the
    /// Glibc module does not import by name).
    static func threadFaults() -> Int {
        var usage = rusage()
        _ = getrusage(__rusage_who_t(1), &usage)
        return usage.ru_minflt
    }

    @Test func aMiBFreedAndAllocatedAgainIsNotFaultedInAfresh() throws {
        ReleasedMemory.configureProcessAllocator()
        let bytes = 1 << 20
        // The first block, and what the encoder still holds above it: a freed block at the top
        // of the heap is handed back at once whatever the threshold.
        let first = try #require(malloc(bytes))
        let above = try #require(malloc(64 << 10))
        defer { free(above) }
        memset(first, 0xFF, bytes)
        free(first)
        var fewest = Int.max
        for _ in 0..<8 {
            let before = Self.threadFaults()
            let block = try #require(malloc(bytes))
            memset(block, 0xFF, bytes)  // as libwebp fills its hash table
            free(block)
            fewest = min(fewest, Self.threadFaults() - before)
        }
        // A mapping of its own faults in all 256 of its pages each round; a block the heap kept,
        // none. Another test's trim may hand the block back between two rounds: the fewest of
        // eight.
        #expect(fewest < bytes / 4096 / 4, "\(fewest) page faults for a 1 MiB block allocated again")
    }
}
