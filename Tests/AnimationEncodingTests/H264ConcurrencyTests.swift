import AnimatedImage
import FlipbookTestSupport
import Foundation
import Synchronization
import Testing

@testable import AnimationEncoding

/// MP4 previews built at once in one process are the bytes of one built alone: a service builds
/// several previews at a time, and every replica and the command line must make the same bytes
/// for the same image (one ETag). While x264 used AVX-512 (see ``H264Settings``), some of these
/// builds coded the first frame's bottom-right macroblock otherwise (6,245 B for 6,238 alone at
/// width 91): x264 read past its frame's arrays, memory whose contents other builds decided.
@Suite("H.264 encoders at once", .ownThreads)
struct H264ConcurrencyTests {
    static let file = "pillow/gif/iss634.gif"

    static func preview(width: Int) throws -> [UInt8] {
        let image = try AnimatedImage(bytes: Corpus.bytes(file))
        let rendition = try MP4PreviewTests.rendition(image, width: width)
        return try MP4PreviewMaker.make(image, rendition: rendition, settings: H264Settings())
    }

    /// Runs `body` on `count` threads of their own (not a pool sized to the cores), all started
    /// before any begins.
    static func atOnce(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let started = DispatchGroup()
        let done = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        for index in 0..<count {
            started.enter()
            done.enter()
            Thread {
                started.leave()
                go.wait()
                body(index)
                done.leave()
            }.start()
        }
        started.wait()
        for _ in 0..<count { go.signal() }
        done.wait()
    }

    /// Four threads, each building previews of several widths one after another (so x264 gets
    /// memory other builds used), against each width built alone first.
    @Test func previewsBuiltAtOnceAreTheLoneBuildsBytes() throws {
        let widths = [91, 64, 91, 130, 91, 48]
        var alone: [Int: [UInt8]] = [:]
        for width in Set(widths) { alone[width] = try Self.preview(width: width) }
        let expected = alone
        for round in 0..<2 {
            let mismatches = Mutex<[String]>([])
            Self.atOnce(4) { thread in
                for (step, width) in widths.enumerated() {
                    let built = Result { try Self.preview(width: width) }
                    if case .success(let bytes) = built, bytes == expected[width] { continue }
                    let got = (try? built.get()).map { "\($0.count) B" } ?? "\(built)"
                    let message = "round \(round), thread \(thread), build \(step) (width \(width)): \(got)"
                    mismatches.withLock { $0.append(message + ", alone \(expected[width]?.count ?? 0) B") }
                }
            }
            let found = mismatches.withLock { $0 }
            #expect(found.isEmpty, "\(found.count) of \(4 * widths.count) builds differ: \(found)")
        }
    }
}
