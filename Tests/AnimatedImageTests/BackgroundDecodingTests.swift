import FlipbookTestSupport
import Testing

@testable import AnimatedImage

/// `FrameRenderer.backgroundDecoding` (used by `flipbook frame`) and `AnimatedImage`'s
/// (the command line's full verification) change where frames are decoded, never what is
/// rendered or kept: same canvases, same decode counts, same errors, same truncation.
@Suite("Background decoding")
struct BackgroundDecodingTests {
    @Test(arguments: RandomAccessTests.corpusAnimations)
    func coldRenderEqualsInLineDecoding(_ path: String) throws {
        let image = try AnimatedImage(bytes: try Corpus.bytes(path))
        let expected = try RandomAccessTests.sequentialFrames(image)
        for k in 0..<image.frameCount {
            let cold = FrameRenderer(image: image, checkpointBudget: 0)
            cold.backgroundDecoding = true
            #expect(try cold.render(k) == expected[k], "\(path) frame \(k)")
            #expect(cold.decodeCount == k - image.dependencies.replayStart(atOrBefore: k) + 1)
        }
    }

    @Test func longReplayWithoutIndependentFrames() throws {
        let image = try RandomAccessTests.dependentAnimation()
        let expected = try RandomAccessTests.sequentialFrames(image)
        let renderer = FrameRenderer(image: image, checkpointInterval: 16)
        renderer.backgroundDecoding = true
        #expect(try renderer.render(99) == expected[99])
        #expect(renderer.decodeCount == 100)
        // Back to an earlier frame (from a checkpoint), then on again.
        #expect(try renderer.render(40) == expected[40])
        #expect(try renderer.render(97) == expected[97])
    }

    /// A file whose frames after some point do not decode: the renderer reports the same frame
    /// and error with and without background decoding.
    @Test func damagedFramesFailTheSameWay() throws {
        let bytes = try Corpus.bytes("wuffs/muybridge.gif")
        var compared = 0
        for (at, damaged) in DamagedCopies.of(bytes, count: 60, seed: 11, in: bytes.count / 3..<bytes.count * 5 / 6) {
            guard let image = try? AnimatedImage(bytes: damaged, verification: .structural),
                image.frameCount > 4
            else { continue }
            let last = image.frameCount - 1
            let inline = FrameRenderer(image: image)
            let background = FrameRenderer(image: image)
            background.backgroundDecoding = true
            let a = Result { try inline.render(last) }
            let b = Result { try background.render(last) }
            switch (a, b) {
            case (.success(let x), .success(let y)):
                #expect(x == y)
            case (.failure(let x), .failure(let y)):
                #expect(String(describing: x) == String(describing: y))
            default:
                Issue.record("in-line and background decoding disagree at cut \(at): \(a) vs \(b)")
            }
            #expect(inline.decodeCount == background.decodeCount)
            compared += 1
        }
        #expect(compared > 0)
    }

    /// Full verification on background threads keeps the frames verification in line keeps:
    /// the same count (cut at the same damaged frame), the same truncation mark, the same error
    /// when no frame decodes.
    @Test func verificationTruncatesTheSameWay() throws {
        let bytes = try Corpus.bytes("wuffs/muybridge.gif")
        let frameCount = try AnimatedImage(bytes: bytes).frameCount
        var truncated = 0
        for (at, damaged) in DamagedCopies.of(bytes, count: 60, seed: 23, in: 800..<bytes.count - 100) {
            let inline = Result { try AnimatedImage(bytes: damaged) }
            let background = Result { try AnimatedImage(bytes: damaged, backgroundDecoding: true) }
            switch (inline, background) {
            case (.success(let x), .success(let y)):
                #expect(x.frameCount == y.frameCount, "cut at \(at)")
                #expect(x.index.truncated == y.index.truncated, "cut at \(at)")
                #expect(y.isVerified)
                if x.frameCount < frameCount { truncated += 1 }
            case (.failure(let x), .failure(let y)):
                #expect(String(describing: x) == String(describing: y))
            default:
                Issue.record("in-line and background verification disagree at cut \(at): \(inline) vs \(background)")
            }
        }
        #expect(truncated > 0, "no damage cut the animation short")
    }
}
