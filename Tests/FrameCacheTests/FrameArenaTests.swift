import Foundation
import Testing

@testable import FrameCache

/// The memory file frames live in: page-aligned slots, given back (and their pages freed) when
/// the last holder lets go, bytes intact while anyone holds them.
@Suite("Frame arena")
struct FrameArenaTests {
    static func bytes(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) &+ seed }
    }

    @Test func slotsArePagesAndComeBackWhenReleased() throws {
        let arena = try #require(FrameArena(capacity: 64 * FrameArena.pageSize))
        #expect(arena.freePages == 64)
        var held: [FrameBytes] = []
        for n in 0..<8 {
            let data = Self.bytes(FrameArena.pageSize * 2 + 1 + 100 * n, seed: UInt8(n))
            let slot = try #require(data.withUnsafeBytes { arena.store($0) })
            #expect(slot.slotBytes == 3 * FrameArena.pageSize)
            #expect(slot.file?.descriptor == arena.fd)
            #expect(slot.file!.offset % FrameArena.pageSize == 0)
            held.append(slot)
        }
        #expect(arena.freePages == 64 - 24)
        for (n, slot) in held.enumerated() {
            #expect(slot.array == Self.bytes(FrameArena.pageSize * 2 + 1 + 100 * n, seed: UInt8(n)))
        }
        held.removeSubrange(2..<6)  // a hole in the middle, merged with its neighbours
        #expect(arena.freePages == 64 - 12)
        let big = Self.bytes(FrameArena.pageSize * 12, seed: 9)
        let reused = try #require(big.withUnsafeBytes { arena.store($0) })
        #expect(reused.file!.offset == 2 * 3 * FrameArena.pageSize, "the freed run is found again")
        #expect(reused.array == big)
        held.removeAll()
        withExtendedLifetime(reused) {}
    }

    @Test func aFullArenaSaysSo() throws {
        let arena = try #require(FrameArena(capacity: 4 * FrameArena.pageSize))
        let data = Self.bytes(3 * FrameArena.pageSize, seed: 1)
        let first = try #require(data.withUnsafeBytes { arena.store($0) })
        #expect(data.withUnsafeBytes { arena.store($0) } == nil)
        withExtendedLifetime(first) {}
    }

    @Test func bytesReadFromTheFileAreTheBytesStored() throws {
        let arena = try #require(FrameArena(capacity: 16 * FrameArena.pageSize))
        let data = Self.bytes(10_000, seed: 7)
        let slot = try #require(data.withUnsafeBytes { arena.store($0) })
        let file = try #require(slot.file)
        var read = [UInt8](repeating: 0, count: data.count)
        let n = read.withUnsafeMutableBytes { pread(file.descriptor, $0.baseAddress, $0.count, off_t(file.offset)) }
        #expect(n == data.count)
        #expect(read == data)
    }

    @Test func heapBytesHaveNoFile() {
        let heap = FrameBytes([1, 2, 3])
        #expect(heap.file == nil && heap.array == [1, 2, 3] && heap.slotBytes == 3)
    }
}
