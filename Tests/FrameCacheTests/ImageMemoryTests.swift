import AnimatedImage
import FlipbookTestSupport
import Foundation
import Synchronization
import Testing

@testable import FrameCache

/// Image files as a store hands them out: bytes the cache's images borrow (as a mapping is), each
/// counted from its load until its last copy is released.
final class OpenFiles: Sendable {
    private let live = Atomic<Int>(0)
    private let loads = Atomic<Int>(0)

    /// Files open now.
    var open: Int { live.load(ordering: .relaxed) }

    /// Files open once the decode thread that answered last has let go of its job (it does so
    /// just after the cache counts it idle), waiting up to `seconds` for at most `most`.
    func settled(atMost most: Int, seconds: Double = 5) -> Int {
        let deadline = Date().addingTimeInterval(seconds)
        while open > most && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        return open
    }
    /// Files opened so far.
    var opened: Int { loads.load(ordering: .relaxed) }

    /// The tiny animation of `seed` (8×8, two frames), read from a "file" each time it is loaded;
    /// with `padding`, a comment extension of that many bytes makes its file large.
    func image(seed: UInt64, padding: Int = 0) -> CacheableImage {
        let tiny = TinyAnimations.gif(seed: seed)
        let bytes = padding > 0 ? Self.padded(tiny, by: padding) : tiny
        return CacheableImage(
            id: "tiny-\(seed)", frameCount: 2, canvasWidth: 8, canvasHeight: 8,
            load: { [self] in try AnimatedImage(bytes: self.borrowed(bytes)) })
    }

    /// `gif` with a comment extension of about `count` bytes before its trailer.
    static func padded(_ gif: [UInt8], by count: Int) -> [UInt8] {
        precondition(gif.last == 0x3B, "a GIF ends with its trailer")
        var out = Array(gif.dropLast()) + [0x21, 0xFE]
        for _ in 0..<(count / 255) { out += [255] + [UInt8](repeating: 0x20, count: 255) }
        return out + [0, 0x3B]
    }

    private func borrowed(_ bytes: [UInt8]) -> ImageBytes {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
        memory.copyBytes(from: bytes)
        live.wrappingAdd(1, ordering: .relaxed)
        loads.wrappingAdd(1, ordering: .relaxed)
        // The address crosses into the release action as an integer (raw pointers are not Sendable).
        let address = UInt(bitPattern: memory.baseAddress)
        return ImageBytes(borrowing: UnsafeRawBufferPointer(memory)) { [self] in
            UnsafeMutableRawPointer(bitPattern: address)?.deallocate()
            live.wrappingSubtract(1, ordering: .relaxed)
        }
    }
}

/// What the cache keeps per image is bounded by its budget (issue 37): an image's file is held
/// only with its decoder and counted with it (a borrowed file in whole pages, as a mapping costs),
/// each entry's own cost is counted too, and many images asked for once do not hold more than
/// the budget says.
@Suite(.ownThreads) struct ImageMemoryTests {
    static let page = 4096

    func cache(budget: Int, arena: Bool = true, activeSeconds: Double = 30) -> FrameCache {
        var configuration = FrameCacheConfiguration(
            budgetBytes: budget, decodeThreads: 1, activeImageSeconds: activeSeconds)
        configuration.frameArena = arena
        configuration.encodeThreadsPerFrame = 1
        return FrameCache(configuration: configuration)
    }

    @Test func anImageWithoutADecoderHoldsNoFileAndAHeldFileIsCounted() {
        let files = OpenFiles()
        let cache = cache(budget: 64 << 20)
        defer { cache.shutdown() }
        for seed in 0..<200 as Range<UInt64> {
            #expect(cache.fetch(files.image(seed: seed), 0).frame != nil)
        }
        cache.waitUntilIdle()
        var stats = cache.stats()
        let open = files.settled(atMost: stats.decoderBytes / Self.page)
        #expect(open > 0 && open <= 200)
        #expect(stats.decoderBytes >= open * Self.page, "every file held is counted, a page at least")
        #expect(stats.usedBytes == stats.frameBytes + stats.decoderBytes + stats.entryBytes + stats.stagedBytes)

        // A critical purge drops every decoder: no file stays open.
        cache.memoryPressure(.critical, source: "test")
        cache.waitUntilIdle()
        stats = cache.stats()
        #expect(stats.decoderBytes == 0)
        let left = files.settled(atMost: 0)
        #expect(left == 0, "\(left) files held by images without a decoder")

        // Asked for again, an image loads its file again.
        let before = files.opened
        #expect(cache.fetch(files.image(seed: 7), 1).frame != nil)
        cache.waitUntilIdle()
        #expect(files.opened == before + 1)
    }

    @Test func aMappedFileCountsAMappingNotItsPages() {
        // An 8×8 animation in an 8 MiB file, borrowed as a mapping is, in a 4 MiB budget: its pages
        // are the kernel's page cache, so its decoder is kept, counted a mapping's share, and the
        // next frame does not load the file again. (Counted in whole pages, the file outweighed
        // the budget: the decoder went after every job and each frame re-loaded the file.)
        let files = OpenFiles()
        let cache = cache(budget: 4 << 20)
        defer { cache.shutdown() }
        let image = files.image(seed: 1, padding: 8 << 20)
        #expect(cache.fetch(image, 0).frame != nil)
        cache.waitUntilIdle()
        let stats = cache.stats()
        let mapping = ImageSource.mappingBytes(budget: 4 << 20)
        #expect(stats.decoderBytes >= mapping && stats.decoderBytes < mapping + 16 << 10, "\(stats.decoderBytes)")
        #expect(files.settled(atMost: 1) == 1, "the decoder holds its file")
        #expect(cache.fetch(image, 1).frame != nil)
        cache.waitUntilIdle()
        #expect(files.opened == 1, "loaded \(files.opened) times")
    }

    @Test func mappingsHeldByDecodersAreBoundedWhateverTheBudget() {
        // A mapping counts at least budget / maxMappedFiles: a budget of any size holds at most
        // that many mappings (the kernel's vm.max_map_count is 65,530 by default).
        for budget in [1 << 20, 256 << 20, 4 << 30, 64 << 30] {
            let mapping = ImageSource.mappingBytes(budget: budget)
            #expect(mapping >= Self.page)
            #expect(budget / mapping <= ImageSource.maxMappedFiles, "\(budget): \(mapping)")
        }
    }

    @Test func manyImagesAskedForOnceStayWithinTheBudgetEntriesCounted() {
        let files = OpenFiles()
        let budget = 1 << 20
        // Frames on the heap: a tiny frame costs its ~100 bytes, so the entries' own cost is what
        // fills the budget.
        let cache = cache(budget: budget, arena: false, activeSeconds: 0.01)
        defer { cache.shutdown() }
        let count = 1500
        for seed in 0..<UInt64(count) {
            #expect(cache.fetch(files.image(seed: seed), 0).frame != nil)
        }
        cache.waitUntilIdle()
        let stats = cache.stats()
        #expect(stats.usedBytes <= budget)
        #expect(stats.usedBytes == stats.frameBytes + stats.decoderBytes + stats.entryBytes + stats.stagedBytes)
        #expect(stats.entryBytes >= stats.entries * 2048, "each entry counts its own cost")
        #expect(stats.entries * 2048 <= budget, "\(stats.entries) entries of \(count) held in \(budget) bytes")
        let open = files.settled(atMost: stats.decoderBytes / Self.page)
        #expect(stats.decoderBytes >= open * Self.page)
        #expect(open <= budget / Self.page)
        #expect(stats.evictions > 0)
    }

    @Test func openFilesStayBoundedByTheBudgetAsImagesComeAndGo() {
        let files = OpenFiles()
        let budget = 2 << 20
        let cache = cache(budget: budget, activeSeconds: 0.01)
        defer { cache.shutdown() }
        var most = 0
        for seed in 0..<2000 as Range<UInt64> {
            _ = cache.fetch(files.image(seed: seed), 0)
            most = max(most, files.open)
        }
        cache.waitUntilIdle()
        #expect(cache.stats().usedBytes <= budget)
        // Each file held costs a page of the budget at least, and one more may be loading.
        #expect(most <= budget / Self.page + 1, "\(most) files open at once")
    }
}
