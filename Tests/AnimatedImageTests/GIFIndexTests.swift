import FlipbookTestSupport
import Testing

@testable import AnimatedImage

@Suite("GIF index")
struct GIFIndexTests {
    func frame(_ x: Int, _ y: Int, _ w: Int, _ h: Int, fill: UInt8 = 1) -> GIFBuilder.Frame {
        GIFBuilder.Frame(rect: (x, y, w, h), indices: [UInt8](repeating: fill, count: w * h))
    }

    @Test func canvasGrowsToCoverTheFirstFrameOnly() throws {
        var gif = GIFBuilder(width: 4, height: 4)
        gif.frames = [frame(2, 3, 4, 2), frame(0, 0, 9, 9)]
        let index = try AnimatedImage(bytes: gif.build()).index
        #expect(index.canvasWidth == 6)
        #expect(index.canvasHeight == 5)
    }

    @Test func loopCounts() throws {
        var gif = GIFBuilder(width: 1, height: 1)
        gif.frames = [frame(0, 0, 1, 1), frame(0, 0, 1, 1)]
        gif.loopCount = nil
        #expect(try AnimatedImage(bytes: gif.build()).timeline.playCount == 1)
        gif.loopCount = 0
        #expect(try AnimatedImage(bytes: gif.build()).timeline.playCount == 0)
        #expect(try AnimatedImage(bytes: gif.build()).timeline.repetitionCount == .infinite)
        gif.loopCount = 3
        let image = try AnimatedImage(bytes: gif.build())
        #expect(image.timeline.playCount == 4)
        #expect(image.timeline.repetitionCount == .count(3))
    }

    @Test func theLastLoopExtensionWins() throws {
        // Two NETSCAPE blocks (loop 2, then loop 5) as in the corpus's duplicated-loop files.
        var gif = GIFBuilder(width: 1, height: 1)
        gif.loopCount = 2
        gif.frames = [frame(0, 0, 1, 1), frame(0, 0, 1, 1)]
        var bytes = gif.build()
        bytes.removeLast()  // trailer
        bytes += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1, 5, 0, 0, 0x3B]
        #expect(try AnimatedImage(bytes: bytes).timeline.playCount == 6)
    }

    @Test func disposalValues() throws {
        var gif = GIFBuilder(width: 2, height: 2)
        gif.frames = (0..<8).map { value in
            var f = frame(0, 0, 1, 1)
            f.disposal = value
            return f
        }
        let disposals = try AnimatedImage(bytes: gif.build()).index.frames.map(\.disposal)
        #expect(disposals == [.none, .none, .background, .previous, .previous, .none, .none, .none])
    }

    @Test func graphicControlAppliesToTheNextImageOnly() throws {
        var gif = GIFBuilder(width: 2, height: 2)
        var first = frame(0, 0, 2, 2)
        first.delayCentiseconds = 7
        first.transparentIndex = 3
        first.disposal = 2
        var second = frame(0, 0, 2, 2)
        second.hasControl = false
        gif.frames = [first, second]
        let frames = try AnimatedImage(bytes: gif.build()).index.frames
        #expect(frames[0].rawDelayMs == 70)
        #expect(frames[0].disposal == .background)
        #expect(frames[0].isOpaque == false)
        #expect(frames[1].rawDelayMs == 0)
        #expect(frames[1].disposal == .none)
        #expect(frames[1].isOpaque == true)
        guard case .gif(_, _, let transparent) = frames[1].source else { Issue.record("not a GIF frame"); return }
        #expect(transparent == nil)
    }

    @Test func truncatedFileKeepsCompleteFrames() throws {
        var gif = GIFBuilder(width: 2, height: 2)
        gif.frames = [frame(0, 0, 2, 2), frame(0, 0, 2, 2), frame(0, 0, 2, 2)]
        let whole = gif.build()
        let image = try AnimatedImage(bytes: Array(whole.dropLast(6)))
        #expect(image.frameCount == 2)
        #expect(image.index.truncated)
        #expect(try AnimatedImage(bytes: whole).index.truncated == false)
    }

    @Test func unknownRecordEndsTheFrameList() throws {
        var gif = GIFBuilder(width: 2, height: 2)
        gif.frames = [frame(0, 0, 2, 2), frame(0, 0, 2, 2)]
        gif.ending = [0x47, 0x00, 0x00]
        let image = try AnimatedImage(bytes: gif.build())
        #expect(image.frameCount == 2)
        #expect(image.index.truncated)
    }

    @Test func zeroSizedScreenIsRejected() {
        var gif = GIFBuilder(width: 0, height: 5)
        gif.frames = [frame(0, 0, 1, 1)]
        #expect(throws: AnimatedImageError.self) { try AnimatedImage(bytes: gif.build()) }
    }

    @Test func noFramesIsRejected() {
        let gif = GIFBuilder(width: 3, height: 3)
        #expect(throws: AnimatedImageError.noCompleteFrame(.gif, "the file holds no image")) {
            try AnimatedImage(bytes: gif.build())
        }
    }

    @Test func frameWhoseDataEndsEarlyEndsTheAnimation() throws {
        var gif = GIFBuilder(width: 4, height: 4)
        gif.frames = [frame(0, 0, 4, 4), frame(0, 0, 4, 4)]
        var bytes = gif.build()
        // Make the second frame's LZW data stop after two pixels (end code, then nothing).
        let second = try AnimatedImage(bytes: bytes, verification: .structural).index.frames[1]
        guard case .gif(let descriptor, _, _) = second.source else { return }
        let data = descriptor + 10
        // Two pixels of sixteen, then the end code.
        bytes.replaceSubrange(data..<(bytes.count - 1), with: GIFBuilder.lzw([1, 1], minimumCodeSize: 8))
        let image = try AnimatedImage(bytes: bytes)
        #expect(image.frameCount == 1)
        #expect(image.index.truncated)
    }
}
