import AnimatedImage
import FlipbookTestSupport
import Foundation
import Testing

@testable import ImageStorage

/// How the store hands images to the frame cache: mapped, kept in a bounded LRU, dropped on
/// delete and replace, and verified through a mapping on upload.
@Suite struct ImageStoreLoadingTests {
    static let gifs = ["wuffs/muybridge.gif", "pillow/gif/iss634.gif", "pygif/depth8.gif"]

    static func commit(_ store: ImageStore, _ bytes: [UInt8], name: String? = nil) throws -> (StoredImage, created: Bool) {
        let upload = try store.beginUpload()
        try bytes.withUnsafeBytes { try upload.append($0) }
        return try store.commit(upload, name: name)
    }

    static func baseAddress(_ image: AnimatedImage) -> UnsafePointer<UInt8>? {
        image.bytes.withUnsafeBufferPointer { $0.baseAddress }
    }

    @Test func anUploadIsKeptMappedSoTheFirstLoadNeitherReadsNorIndexes() throws {
        let store = try ImageStore(dataDirectory: ScratchDirectory.make("store"))
        let bytes = try Corpus.bytes("wuffs/muybridge.gif")
        let (record, created) = try Self.commit(store, bytes)
        #expect(created)
        #expect(store.fileStats.loaded == 1)
        #expect(store.fileStats.mapped == 1 && store.fileStats.mappedBytes == bytes.count)
        let first = try store.loadImage(record)
        let second = try store.loadImage(record)
        #expect(first.bytes.storage == .external)
        #expect(Array(first.bytes) == bytes)
        #expect(first.frameCount == record.metadata.frameCount)
        #expect(Self.baseAddress(first) == Self.baseAddress(second))  // the same mapping
        #expect(store.fileStats.mapped == 1)  // no second mapping was made
        #expect(store.fileStats.heapCopies == 0)
    }

    @Test func theLRUKeepsItsBoundAndReleasesWhatItDrops() throws {
        let store = try ImageStore(dataDirectory: ScratchDirectory.make("store"), maxLoadedImages: 2)
        var records: [StoredImage] = []
        for path in Self.gifs {
            records.append(try Self.commit(store, try Corpus.bytes(path)).0)
        }
        #expect(store.fileStats.loaded == 2)
        #expect(store.fileStats.loadedLimit == 2)
        #expect(store.fileStats.mapped == 2)  // the dropped image's mapping is gone
        // The dropped (oldest) image is mapped and indexed again, and kept, dropping the next oldest.
        let reloaded = try store.loadImage(records[0])
        #expect(Array(reloaded.bytes) == (try Corpus.bytes(Self.gifs[0])))
        #expect(store.fileStats.loaded == 2)
        #expect(store.fileStats.mapped == 2)  // `reloaded` is the kept one
        let kept = try store.loadImage(records[0])
        #expect(Self.baseAddress(kept) == Self.baseAddress(reloaded))
    }

    @Test func deletingAnImageDropsItsMapping() throws {
        let store = try ImageStore(dataDirectory: ScratchDirectory.make("store"))
        let (record, _) = try Self.commit(store, try Corpus.bytes("pillow/gif/iss634.gif"))
        #expect(store.fileStats.loaded == 1 && store.fileStats.mapped == 1)
        #expect(try store.delete(record.id))
        #expect(store.fileStats.loaded == 0 && store.fileStats.mapped == 0)
        #expect(throws: ImageStore.StoreError.self) { try store.loadImage(record) }
    }

    @Test func aReplacedNamedImageIsServedFromItsNewBytes() throws {
        let store = try ImageStore(dataDirectory: ScratchDirectory.make("store"))
        let old = try Corpus.bytes("wuffs/muybridge.gif")
        let new = try Corpus.bytes("pillow/gif/iss634.gif")
        let (first, _) = try Self.commit(store, old, name: "clip.gif")
        let before = try store.loadImage(first)
        #expect(Array(before.bytes) == old)
        let (second, created) = try Self.commit(store, new, name: "clip.gif")
        #expect(!created)
        #expect(second.sha256 != first.sha256)
        let after = try store.loadImage(try #require(store.record("clip.gif")))
        #expect(Array(after.bytes) == new)
        #expect(after.frameCount == second.metadata.frameCount)
        #expect(Array(before.bytes) == old)  // a decoder still holding the old image keeps valid bytes
        #expect(store.fileStats.loaded == 1)
    }

    @Test func anotherReplicasReplaceOrDeleteDropsTheKeptImage() throws {
        let directory = ScratchDirectory.make("store")
        let clock = ManualClock()
        let a = try ImageStore(dataDirectory: directory, clock: clock)
        let b = try ImageStore(dataDirectory: directory)
        let (record, _) = try Self.commit(a, try Corpus.bytes("wuffs/muybridge.gif"), name: "shared.gif")
        #expect(a.fileStats.loaded == 1)
        _ = try Self.commit(b, try Corpus.bytes("pillow/gif/iss634.gif"), name: "shared.gif")
        #expect(a.record("shared.gif")?.sha256 == record.sha256)  // trusted until the recheck
        clock.advance(by: a.recheckSeconds)
        let seen = try #require(a.record("shared.gif"))
        #expect(seen.sha256 != record.sha256)
        #expect(a.fileStats.loaded == 0 && a.fileStats.mapped == 0)
        #expect(Array(try a.loadImage(seen).bytes) == (try Corpus.bytes("pillow/gif/iss634.gif")))
        #expect(try b.delete("shared.gif"))
        #expect(a.record("shared.gif") != nil)
        clock.advance(by: a.recheckSeconds)
        #expect(a.record("shared.gif") == nil)
        #expect(a.fileStats.loaded == 0 && a.fileStats.mapped == 0)
    }

    @Test func uploadsVerifiedThroughAMappingAreRejectedAsBefore() throws {
        let store = try ImageStore(dataDirectory: ScratchDirectory.make("store"))
        let gif = try Corpus.bytes("wuffs/muybridge.gif")
        let truncated = Array(gif.prefix(40))
        let cases: [(String, [UInt8])] = [
            ("text", Array("<html>not an image</html>".utf8)), ("empty", []),
            ("truncated", truncated), ("broken frame", Array(gif.prefix(gif.count / 2))),
        ]
        var accepted = 0
        for (label, bytes) in cases {
            // What indexing the bytes from an array says, as the store did before it mapped uploads.
            let expected: String
            do {
                _ = try AnimatedImage(bytes: bytes, limits: store.limits, verification: .full)
                expected = "accepted"
            } catch AnimatedImageError.unsupportedFormat {
                expected = "unsupported"
            } catch {
                expected = "undecodable: \(error)"
            }
            let outcome: String
            do {
                _ = try Self.commit(store, bytes)
                outcome = "accepted"
                accepted += 1
            } catch ImageStore.StoreError.unsupportedFormat {
                outcome = "unsupported"
            } catch ImageStore.StoreError.undecodable(let why) {
                outcome = "undecodable: \(why)"
            }
            #expect(outcome == expected, "\(label)")
        }
        #expect(throws: ImageStore.StoreError.self) { try Self.commit(store, Array("<html>".utf8)) }
        let limits = DecodeLimits(maxFileBytes: 1000)
        let limited = try ImageStore(dataDirectory: ScratchDirectory.make("store"), limits: limits)
        let overLimit = try #require(throws: AnimatedImageError.self) { try AnimatedImage(bytes: gif, limits: limits) }
        let refusal = try #require(throws: ImageStore.StoreError.self) { try Self.commit(limited, gif) }
        guard case .undecodable(let why) = refusal else { Issue.record("\(refusal)"); return }
        #expect(why == "\(overLimit)")
        // Refused uploads leave nothing mapped or kept behind.
        #expect(store.fileStats.mapped == accepted && store.fileStats.loaded == accepted)
        #expect(limited.fileStats.mapped == 0 && limited.fileStats.loaded == 0)
    }

    @Test func anOriginalSmallerThanAPageIsReadNotMapped() throws {
        // A mapping would cost a whole page and one of the process's `vm.max_map_count`.
        let store = try ImageStore(dataDirectory: ScratchDirectory.make("store"), maxLoadedImages: 1)
        let tiny = TinyAnimations.gif(seed: 1)
        #expect(tiny.count < 4096)
        let (record, _) = try Self.commit(store, tiny)
        _ = try Self.commit(store, TinyAnimations.gif(seed: 2))  // drops the first from the LRU
        #expect(store.fileStats.mapped == 1 && store.fileStats.heapCopies == 0)  // the second upload's
        let image = try store.loadImage(record)
        #expect(image.bytes.storage == .heap && Array(image.bytes) == tiny)
        #expect(store.fileStats.mapped == 0, "the second upload's mapping went with it from the LRU")
        #expect(store.fileStats.heapCopies == 1 && store.fileStats.heapBytes == tiny.count)
        #expect(Self.baseAddress(try store.loadImage(record)) == Self.baseAddress(image), "kept, not read again")
    }

    @Test func libraryFilesAreReadOntoTheHeapAndNotKept() throws {
        let library = ScratchDirectory.make("store")
        let bytes = try Corpus.bytes("pillow/gif/iss634.gif")
        #expect(FileManager.default.createFile(atPath: library + "/loop.gif", contents: Data(bytes)))
        let store = try ImageStore(dataDirectory: ScratchDirectory.make("store"), libraryDirectories: [library])
        let record = try #require(store.record("loop.gif"))
        var image: AnimatedImage? = try store.loadImage(record)
        #expect(image?.bytes.storage == .heap)
        #expect(image.map { Array($0.bytes) } == bytes)
        #expect(store.fileStats.heapCopies == 1 && store.fileStats.heapBytes == bytes.count)
        #expect(store.fileStats.loaded == 0 && store.fileStats.mapped == 0)
        image = nil
        #expect(store.fileStats.heapCopies == 0 && store.fileStats.heapBytes == 0)
    }
}
