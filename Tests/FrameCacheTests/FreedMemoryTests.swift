import AnimatedImage
import SystemResources
import Testing

@testable import FrameCache

/// What the cache counts towards `malloc_trim` (``FreedMemory``): only bytes that go back to
/// malloc's heap. Frames in the memory file and canvases mapped on their own go back to the
/// kernel by themselves, and counting them made the process trim its heap for nothing.
@Suite("Freed memory")
struct FreedMemoryTests {
    let now = 1000.0

    func add(_ id: String, _ image: AnimatedImage, to state: inout CacheState) -> ImageEntry {
        let entry = ImageEntry(image: CacheableImage(id: id, image: image), now: now, tick: state.nextTick())
        state.entries[id] = entry
        return entry
    }

    @Test func framesInTheMemoryFileAreNotCountedFramesOnTheHeapAre() throws {
        let arena = try #require(FrameArena(capacity: 64 * FrameArena.pageSize))
        var state = CacheState(budget: 10 << 20, activeSeconds: 30)
        let entry = add("a", try TestImages.long(), to: &state)
        let png = [UInt8](repeating: 7, count: 10_000)
        state.store(
            CachedFrame(bytes: try #require(png.withUnsafeBytes { arena.store($0) }), attachment: nil),
            in: entry, at: 1)
        state.store(CachedFrame(png: png, attachment: nil), in: entry, at: 2)
        #expect(state.heldBytes == 3 * FrameArena.pageSize + png.count + entry.overheadBytes, "the budget counts both")

        state.evict(entry, frame: 1)
        #expect(state.freed.heapBytesFreed == 0, "its pages were punched out of the file")
        #expect(arena.freePages == 64)
        state.evict(entry, frame: 2)
        #expect(state.freed.heapBytesFreed == png.count)
        #expect(state.heldBytes == entry.overheadBytes, "the entry's own cost is left")
    }

    @Test func canvasesMappedOnTheirOwnAreNotCountedSmallOnesAre() throws {
        var state = CacheState(budget: 64 << 20, activeSeconds: 30)
        let large = try TestImages.huge()  // 1100×1000: 4.4 MB a canvas, a mapping of its own
        let small = try TestImages.medium()  // 245×245: 240 KB a canvas, on the heap
        #expect(large.index.bytesPerFrame >= Int(ReleasedMemory.ownMappingBytes))
        #expect(small.index.bytesPerFrame < Int(ReleasedMemory.ownMappingBytes))
        let a = add("a", large, to: &state)
        let b = add("b", small, to: &state)
        for (entry, image) in [(a, large), (b, small)] {
            entry.renderer = FrameRenderer(image: image)
            state.updateRendererBytes(entry)
        }
        // The decoders count their images too, which are not canvases.
        let images =
            ImageSource.residentBytes(of: large, mappingBytes: state.mappingBytes)
            + ImageSource.residentBytes(of: small, mappingBytes: state.mappingBytes)
        #expect(state.decoderBytes == large.index.bytesPerFrame + small.index.bytesPerFrame + images)
        #expect(state.freed.heapBytesFreed == 0)

        state.dropRenderer(a)
        #expect(state.freed.heapBytesFreed == 0)
        state.dropRenderer(b)
        #expect(state.freed.heapBytesFreed == small.index.bytesPerFrame)
        #expect(state.decoderBytes == 0)
    }
}
