@testable import AnimatedImage
import Testing

@Suite("APNG index")
struct APNGIndexTests {
    let red = APNGBuilder.Frame(rect: (0, 0, 2, 2), pixels: solid(255, 0, 0, 255, count: 4))
    let green = APNGBuilder.Frame(rect: (0, 0, 2, 2), pixels: solid(0, 255, 0, 255, count: 4))

    @Test func imageDataAfterAFrameControlIsFrameZero() throws {
        let image = try AnimatedImage(bytes: APNGBuilder(width: 2, height: 2, frames: [red, green]).build())
        #expect(image.format == .apng)
        #expect(image.frameCount == 2)
        let first = try FrameRenderer(image: image).render(0)
        #expect(Array(first.pixels.prefix(4)) == [255, 0, 0, 255])
    }

    @Test func aDefaultImageIsNotPartOfTheAnimation() throws {
        var apng = APNGBuilder(width: 2, height: 2, frames: [green])
        apng.defaultImage = solid(0, 0, 255, 255, count: 4)
        let image = try AnimatedImage(bytes: apng.build())
        #expect(image.frameCount == 1)
        #expect(Array(try FrameRenderer(image: image).render(0).pixels.prefix(4)) == [0, 255, 0, 255])
    }

    /// Whole milliseconds by integer division, as Chromium reports them (measured with
    /// browser-frames, Chromium 156: 1/15 → 66000 µs, 2/3 → 666000, 3/1001 → 2000, 1/90 → 11000,
    /// 65535/65534 → 1000000).
    @Test func delays() throws {
        let fractions = [(1, 0), (3, 2), (1, 3), (1, 15), (2, 3), (3, 1001), (1, 90), (65535, 65534), (0, 0), (65535, 1)]
        let frames = fractions.map { num, den in
            var frame = red
            (frame.delayNumerator, frame.delayDenominator) = (num, den)
            return frame
        }
        let image = try AnimatedImage(bytes: APNGBuilder(width: 2, height: 2, frames: frames).build())
        #expect(image.timeline.rawDelaysMs == [10, 1500, 333, 66, 666, 2, 11, 1000, 0, 65_535_000])
        #expect(image.timeline.delaysMs == [100, 1500, 333, 66, 666, 100, 11, 1000, 100, 65_535_000])
    }

    @Test func framesBeyondTheDeclaredCountAreIgnored() throws {
        var apng = APNGBuilder(width: 2, height: 2, frames: [red, green, red])
        apng.declaredFrames = 2
        #expect(try AnimatedImage(bytes: apng.build()).frameCount == 2)
    }

    @Test func fewerFramesThanDeclaredIsTruncated() throws {
        var apng = APNGBuilder(width: 2, height: 2, frames: [red, green])
        apng.declaredFrames = 3
        let image = try AnimatedImage(bytes: apng.build())
        #expect(image.frameCount == 2)
        #expect(image.index.truncated)
    }

    @Test func invalidFrameCountMakesAStillPNG() throws {
        var apng = APNGBuilder(width: 2, height: 2, frames: [red, green])
        apng.declaredFrames = 0
        let image = try AnimatedImage(bytes: apng.build())
        #expect(image.format == .png)
        #expect(image.frameCount == 1)
    }

    @Test func playCount() throws {
        var apng = APNGBuilder(width: 2, height: 2, frames: [red, green])
        apng.plays = 3
        let image = try AnimatedImage(bytes: apng.build())
        #expect(image.timeline.playCount == 3)
        #expect(image.timeline.repetitionCount == .count(2))
    }

    @Test func sequenceBreakKeepsTheFramesBeforeIt() throws {
        var bytes = APNGBuilder(width: 2, height: 2, frames: [red, green, red]).build()
        // The third fcTL carries sequence 3; make it 9.
        let fcTL = Array("fcTL".utf8)
        var found = 0
        for i in 0..<(bytes.count - 4) where Array(bytes[i..<i + 4]) == fcTL {
            found += 1
            if found == 3 { bytes[i + 7] = 9 }
        }
        let image = try AnimatedImage(bytes: bytes)
        #expect(image.frameCount == 2)
        #expect(image.index.truncated)
    }

    @Test func frameOutsideTheCanvasEndsTheAnimation() throws {
        var outside = green
        outside.rect = (1, 1, 2, 2)
        let image = try AnimatedImage(bytes: APNGBuilder(width: 2, height: 2, frames: [red, outside]).build())
        #expect(image.frameCount == 1)
        #expect(image.index.truncated)
    }

    @Test func disposeAndBlendAreRead() throws {
        var a = red, b = green
        a.dispose = 1
        a.blend = 1
        b.dispose = 2
        let frames = try AnimatedImage(bytes: APNGBuilder(width: 2, height: 2, frames: [a, b]).build()).index.frames
        #expect(frames.map(\.disposal) == [.background, .previous])
        #expect(frames.map(\.blend) == [.over, .source])
    }

    @Test func truncatedImageDataEndsTheAnimation() throws {
        let whole = APNGBuilder(width: 2, height: 2, frames: [red, green]).build()
        // Cut inside the last fdAT: its chunk is incomplete, so frame 1 is lost.
        let image = try AnimatedImage(bytes: Array(whole.dropLast(20)))
        #expect(image.frameCount == 1)
        #expect(image.index.truncated)
    }
}
