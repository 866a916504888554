import FlipbookTestSupport
import Synchronization
import Testing

@testable import AnimatedImage

/// ``ImageBytes``: a collection from 0, shared by copies, released once with the last copy.
@Suite struct ImageBytesTests {
    @Test func anArrayCopyReadsLikeTheArray() {
        let array: [UInt8] = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let bytes = ImageBytes(array)
        #expect(bytes.storage == .heap)
        #expect(bytes.count == array.count)
        #expect(bytes.startIndex == 0 && bytes.endIndex == array.count)
        #expect(Array(bytes) == array)
        #expect(bytes[0] == array[0] && bytes[299] == array[299])
        #expect(Array(bytes[10..<20]) == Array(array[10..<20]))
        #expect(bytes[10..<20].startIndex == 10)
        #expect(bytes.withUnsafeBufferPointer { Array($0) } == array)
        #expect(bytes.withUnsafeBufferPointer(of: 5..<9) { Array($0) } == Array(array[5..<9]))
        #expect(bytes.withContiguousStorageIfAvailable { $0.count } == array.count)
        #expect(bytes == ImageBytes(array))
        #expect(bytes != ImageBytes(Array(array.dropLast())))
    }

    @Test func anEmptyArrayGivesNoBytes() {
        let bytes = ImageBytes([])
        #expect(bytes.isEmpty)
        #expect(bytes.withUnsafeBufferPointer { $0.count } == 0)
        #expect(ImageFormat.sniff(bytes) == nil)
    }

    @Test func borrowedMemoryIsReleasedOnceWithTheLastCopy() throws {
        let releases = Mutex(0)
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 1)
        for i in 0..<64 { memory[i] = UInt8(i) }
        var slice: Slice<ImageBytes>? = nil
        do {
            let bytes = ImageBytes(borrowing: UnsafeRawBufferPointer(memory)) { releases.withLock { $0 += 1 } }
            #expect(bytes.storage == .external)
            #expect(Array(bytes) == Array(0..<64))
            let copy = bytes
            slice = copy[8..<16]
        }
        #expect(releases.withLock { $0 } == 0)  // the slice still holds the bytes
        #expect(Array(try #require(slice)) == Array(8..<16))
        slice = nil
        #expect(releases.withLock { $0 } == 1)
        memory.deallocate()
    }

    @Test func heapBytesReportTheirRelease() throws {
        let releases = Mutex(0)
        do {
            let bytes = ImageBytes(unsafeUninitializedCount: 4, onRelease: { releases.withLock { $0 += 1 } }) {
                $0[0] = 1; $0[3] = 4
            }
            #expect(Array(bytes) == [1, 0, 0, 4])
        }
        #expect(releases.withLock { $0 } == 1)
        struct Failed: Error {}
        #expect(throws: Failed.self) {
            _ = try ImageBytes(unsafeUninitializedCount: 4, onRelease: { releases.withLock { $0 += 1 } }) { _ in
                throw Failed()
            }
        }
        #expect(releases.withLock { $0 } == 1)  // no value was made, so nothing to release
    }

    @Test func anImageOverBorrowedBytesIndexesAndRendersLikeOneOverAnArray() throws {
        for path in ["wuffs/muybridge.gif", "image-rs-image/images/png/apng/ball.png", "pillow/webp/iss634.webp"] {
            let array = try Corpus.bytes(path)
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: array.count, alignment: 16)
            array.withUnsafeBytes { memory.copyMemory(from: $0) }
            let released = Mutex(false)
            do {
                let borrowed = ImageBytes(borrowing: UnsafeRawBufferPointer(memory)) { released.withLock { $0 = true } }
                let fromArray = try AnimatedImage(bytes: array)
                let fromBorrowed = try AnimatedImage(bytes: borrowed)
                #expect(fromBorrowed.index.frames == fromArray.index.frames, "\(path)")
                #expect(fromBorrowed.canvasWidth == fromArray.canvasWidth && fromBorrowed.canvasHeight == fromArray.canvasHeight)
                #expect(fromBorrowed.index.playCount == fromArray.index.playCount)
                #expect(fromBorrowed.bytes.storage == .external)
                let a = FrameRenderer(image: fromArray)
                let b = FrameRenderer(image: fromBorrowed)
                for i in 0..<fromArray.frameCount {
                    #expect(try a.render(i) == b.render(i), "\(path) frame \(i)")
                }
            }
            #expect(released.withLock { $0 }, "\(path): the image let its bytes go")
            memory.deallocate()
        }
    }
}
