import AnimatedImage
import FlipbookTestSupport
import Foundation
import Testing

@testable import ImageStorage

/// ``MappedFile`` bytes behave as a heap copy of the file does; ``LRUCache`` keeps its bound.
@Suite struct MappedFileTests {
    /// A few corpus files of each format, and the repository's samples.
    static let files: [String] = [
        Corpus.root.appendingPathComponent("wuffs/muybridge.gif").path,
        Corpus.root.appendingPathComponent("pillow/gif/iss634.gif").path,
        Corpus.root.appendingPathComponent("image-rs-image/images/png/apng/ball.png").path,
        Corpus.root.appendingPathComponent("pillow/webp/iss634.webp").path,
        samples("orbit.gif"), samples("orbit.png"), samples("orbit.webp"),
    ]

    static func samples(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Samples").appendingPathComponent(name).path
    }

    @Test(arguments: files)
    func aMappingReadsLikeTheArray(_ path: String) throws {
        let array = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let heap = ImageBytes(array)
        let mapped = try MappedFile(path: path).bytes
        #expect(mapped.storage == .external)
        #expect(mapped.count == heap.count)
        #expect(mapped.indices == heap.indices)
        #expect(mapped == heap)
        #expect(Array(mapped) == array)
        for i in stride(from: 0, to: array.count, by: max(1, array.count / 97)) {
            #expect(mapped[i] == heap[i])
        }
        let middle = array.count / 3..<array.count / 2
        #expect(Array(mapped[middle]) == Array(heap[middle]))
        #expect(mapped[middle].startIndex == middle.lowerBound)
        #expect(mapped.withUnsafeBufferPointer { Array($0) } == heap.withUnsafeBufferPointer { Array($0) })
        #expect(mapped.withUnsafeBufferPointer(of: middle) { Array($0) } == Array(array[middle]))
        #expect(ImageFormat.sniff(mapped) == ImageFormat.sniff(array))
    }

    @Test(arguments: files)
    func anImageOverAMappingRendersTheSameFrames(_ path: String) throws {
        let array = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let fromArray = try AnimatedImage(bytes: array)
        let fromMapping = try AnimatedImage(bytes: try MappedFile(path: path).bytes)
        #expect(fromMapping.index.frames == fromArray.index.frames)
        #expect(ImageMetadata(image: fromMapping) == ImageMetadata(image: fromArray))
        let a = FrameRenderer(image: fromArray)
        let b = FrameRenderer(image: fromMapping)
        for i in 0..<fromArray.frameCount {
            #expect(try a.render(i) == b.render(i), "frame \(i)")
        }
    }

    @Test func anEmptyFileIsAnErrorNotAnEmptyMapping() throws {
        let directory = ScratchDirectory.make("store")
        let empty = directory + "/empty"
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        let failure = try #require(throws: MappedFile.Failure.self) { try MappedFile(path: empty) }
        #expect(failure.isEmpty)
        let missing = try #require(throws: MappedFile.Failure.self) { try MappedFile(path: directory + "/none") }
        #expect(!missing.isEmpty)
        #expect(throws: MappedFile.Failure.self) { try MappedFile(path: directory) }
    }

    @Test func mappingsAreCountedUntilTheirLastCopyGoes() throws {
        let files = LoadedImages(limit: 2)
        var bytes: ImageBytes? = try files.map(Self.samples("orbit.gif"))
        let size = try #require(bytes?.count)
        #expect(files.stats.mapped == 1 && files.stats.mappedBytes == size)
        var image: AnimatedImage? = try AnimatedImage(bytes: try #require(bytes))
        bytes = nil
        #expect(files.stats.mapped == 1)  // the image holds them
        files.keep(try #require(image), id: "a", sha256: "s")
        image = nil
        #expect(files.stats.mapped == 1 && files.stats.loaded == 1)  // the store holds them
        files.forget("a")
        #expect(files.stats == FileStats(loaded: 0, loadedLimit: 2, mapped: 0, mappedBytes: 0, heapCopies: 0, heapBytes: 0))
        var copy: ImageBytes? = try files.read(Self.samples("orbit.png"))
        #expect(copy?.storage == .heap)
        #expect(files.stats.heapCopies == 1 && files.stats.heapBytes == copy?.count)
        copy = nil
        #expect(files.stats.heapCopies == 0 && files.stats.heapBytes == 0)
    }

    @Test func theLRUCacheDropsTheLeastRecentlyUsed() {
        var lru = LRUCache<String, Int>(capacity: 3)
        #expect(lru.insert(1, for: "a") == nil)
        lru.insert(2, for: "b")
        lru.insert(3, for: "c")
        #expect(lru.value(for: "a") == 1)  // a is now the most recent; b the least
        let evicted = lru.insert(4, for: "d")
        #expect(evicted?.key == "b" && evicted?.value == 2)
        #expect(lru.count == 3)
        #expect(lru.values == [4, 1, 3])
        #expect(lru.insert(10, for: "c") == nil)  // replaced in place, now the most recent
        #expect(lru.values == [10, 4, 1])
        #expect(lru.removeValue(for: "4") == nil)
        #expect(lru.removeValue(for: "d") == 4)
        #expect(lru.values == [10, 1])
        lru.insert(5, for: "e")
        lru.insert(6, for: "f")
        #expect(lru.values == [6, 5, 10])
        #expect(lru.peek("a") == nil && lru.peek("c") == 10)
        for key in ["c", "e", "f"] { lru.removeValue(for: key) }
        #expect(lru.count == 0 && lru.values.isEmpty)
        lru.insert(7, for: "g")
        #expect(lru.values == [7])
    }

    @Test func aForgottenValueIsReleasedAtOnce() {
        final class Token {}
        weak var watched: Token?
        var lru = LRUCache<String, Token>(capacity: 4)
        do {
            let token = Token()
            watched = token
            lru.insert(token, for: "a")
            lru.insert(Token(), for: "b")
        }
        #expect(watched != nil)
        lru.removeValue(for: "a")
        #expect(watched == nil)
    }
}
