import AnimatedImage
import FlipbookTestSupport
import Foundation
import Synchronization
import SystemResources
import Testing

@testable import FrameCache

/// The decode threads run below the event loops' priority (``FrameCache/decodeThreadNiceOffset``
/// above the process's nice value), set on each thread alone: the thread that asks for a frame
/// keeps its own.
@Suite("Frame cache: decode thread priority", .ownThreads)
struct DecodeThreadPriorityTests {
    /// The calling thread's nice value, read back from `/proc/thread-self/stat` (the 19th field;
    /// Linux keeps one per thread).
    static func threadNice() throws -> Int {
        let stat = try String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)
        let afterName = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...]
        let fields = afterName.split(separator: " ")
        return try #require(Int(fields[16]))  // field 3 (state) is the first after the name
    }

    @Test func imagesAreLoadedAndDecodedOnThreadsAtTheDecodeNiceValue() throws {
        let image = try TestImages.small()
        let seen = Mutex<[Int]>([])
        let cache = FrameCache(
            configuration: FrameCacheConfiguration(
                budgetBytes: 64 << 20, decodeThreads: 2,
                window: WindowPolicy(wholeAnimationBytes: 0, minimumWindow: 1)))
        defer { cache.shutdown() }
        let callerBefore = try Self.threadNice()
        let entry = CacheableImage(
            id: "small", frameCount: image.frameCount, canvasWidth: image.canvasWidth,
            canvasHeight: image.canvasHeight,
            load: {
                let nice = (try? Self.threadNice()) ?? -100
                seen.withLock { $0.append(nice) }
                return image
            },
            prepare: { _, _ in
                let nice = (try? Self.threadNice()) ?? -100
                seen.withLock { $0.append(nice) }
                return nil
            })
        #expect(cache.fetch(entry, 0).frame != nil)
        cache.waitUntilIdle()
        let values = seen.withLock { $0 }
        #expect(values.count >= 2, "the image was loaded and at least one frame made: \(values)")
        // A thread without privilege may not lower its nice value: started by a caller above the
        // decode threads' value, it keeps the one it inherited.
        let nice = Int(FrameCache.expectedDecodeThreadNice)
        let allowed: Set<Int> = callerBefore < nice ? [nice] : [nice, callerBefore]
        #expect(values.allSatisfy { allowed.contains($0) }, "\(values), caller at \(callerBefore)")
        #expect(try Self.threadNice() == callerBefore)
    }
}

extension FrameCache {
    /// The decode (and encode helper) threads' nice value in this process: the process's plus
    /// the offset, within the nice range.
    static var expectedDecodeThreadNice: Int32 {
        ThreadPriority.nice(base: ThreadPriority.processNice, offset: decodeThreadNiceOffset)
    }
}
