import CZlib
import Testing

@testable import AnimatedImage

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
            if found == 3 {
                bytes[i + 7] = 9
                Self.fixCRC(&bytes, chunkTypeAt: i)
            }
        }
        let image = try AnimatedImage(bytes: bytes)
        #expect(image.frameCount == 2)
        #expect(image.index.truncated)
    }

    /// Recomputes the CRC of the chunk whose type starts at `at`.
    static func fixCRC(_ bytes: inout [UInt8], chunkTypeAt at: Int) {
        let length = Int(bytes[at - 4]) << 24 | Int(bytes[at - 3]) << 16 | Int(bytes[at - 2]) << 8 | Int(bytes[at - 1])
        let body = Array(bytes[at..<at + 4 + length])
        let value = UInt32(body.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) })
        bytes.replaceSubrange(
            at + 4 + length..<at + 8 + length,
            with: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }

    /// Offsets of the types of the chunks named `type`, in order.
    static func chunkOffsets(_ bytes: [UInt8], _ type: String) -> [Int] {
        var offsets: [Int] = []
        var at = 8
        while at + 8 <= bytes.count {
            let length = Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            if bytes[at + 4..<at + 8].elementsEqual(type.utf8) { offsets.append(at + 4) }
            at += 12 + length
        }
        return offsets
    }

    static func breakCRC(_ bytes: [UInt8], _ type: String, _ n: Int = 0) -> [UInt8] {
        var copy = bytes
        let at = chunkOffsets(bytes, type)[n]
        let length = Int(bytes[at - 4]) << 24 | Int(bytes[at - 3]) << 16 | Int(bytes[at - 2]) << 8 | Int(bytes[at - 1])
        copy[at + 4 + length] ^= 1
        return copy
    }

    /// Chromium 156 on chunks whose CRC does not match (measured with browser-frames on an
    /// apngasm animation of 10 frames): IHDR, PLTE, IDAT reject the file; acTL makes it a still;
    /// fcTL k ends the animation before frame k; fdAT, tRNS and others are used or skipped.
    @Test func chunksWithBadCRCs() throws {
        let frames = [red, green, red, green]
        let apng = APNGBuilder(width: 2, height: 2, frames: frames).build()
        #expect(throws: AnimatedImageError.self) { try AnimatedImage(bytes: Self.breakCRC(apng, "IHDR")) }
        #expect(throws: AnimatedImageError.self) { try AnimatedImage(bytes: Self.breakCRC(apng, "IDAT")) }
        let still = try AnimatedImage(bytes: Self.breakCRC(apng, "acTL"))
        #expect(still.format == .png && still.frameCount == 1)
        for k in 1..<4 {
            let cut = try AnimatedImage(bytes: Self.breakCRC(apng, "fcTL", k))
            #expect(cut.frameCount == k, "fcTL \(k)")
            #expect(cut.index.truncated)
        }
        #expect(throws: AnimatedImageError.self) { try AnimatedImage(bytes: Self.breakCRC(apng, "fcTL", 0)) }
        let dataCRC = try AnimatedImage(bytes: Self.breakCRC(apng, "fdAT", 1))
        #expect(dataCRC.frameCount == 4)
        #expect(try FrameRenderer(image: dataCRC).render(2) == FrameRenderer(image: AnimatedImage(bytes: apng)).render(2))
        #expect(try AnimatedImage(bytes: Self.breakCRC(apng, "IEND")).frameCount == 4)
    }

    /// Chromium does not check a frame's Adler-32 (measured: an fdAT whose checksum bytes are
    /// damaged, CRC fixed, still shows its frame), so neither does Flipbook.
    @Test func aDamagedAdlerChecksumIsIgnored() throws {
        let apng = APNGBuilder(width: 2, height: 2, frames: [red, green, red]).build()
        var damaged = apng
        let at = Self.chunkOffsets(apng, "fdAT")[0]
        let length = Int(apng[at - 4]) << 24 | Int(apng[at - 3]) << 16 | Int(apng[at - 2]) << 8 | Int(apng[at - 1])
        damaged[at + 4 + length - 1] ^= 0x5A  // the stream's last byte: Adler-32
        Self.fixCRC(&damaged, chunkTypeAt: at)
        let image = try AnimatedImage(bytes: damaged)
        #expect(image.frameCount == 3)
        #expect(try FrameRenderer(image: image).render(1) == FrameRenderer(image: AnimatedImage(bytes: apng)).render(1))
    }

    /// A bad CRC on tRNS drops the chunk (the palette's transparency with it), as in Chromium.
    @Test func aTransparencyChunkWithABadCRCIsIgnored() throws {
        let writer = PNGSampleWriter(colorType: 3, bitDepth: 8, interlaced: false)
        var png = LayoutAPNG(writer: writer, width: 2, height: 1, palette: [10, 20, 30, 40, 50, 60], transparency: [0])
        png.frames = [.init(width: 2, height: 1, samples: [0, 1])]
        png.animated = false
        let bytes = png.build()
        #expect(try FrameRenderer(image: AnimatedImage(bytes: bytes)).render(0).pixels == [10, 20, 30, 0, 40, 50, 60, 255])
        let damaged = Self.breakCRC(bytes, "tRNS")
        #expect(try FrameRenderer(image: AnimatedImage(bytes: damaged)).render(0).pixels == [10, 20, 30, 255, 40, 50, 60, 255])
        #expect(throws: AnimatedImageError.self) { try AnimatedImage(bytes: Self.breakCRC(bytes, "PLTE")) }
    }

    /// Chromium shows a frame only once a complete chunk follows its data (measured: an APNG cut
    /// right after frame 4's fdAT shows 4 frames, with the next fcTL complete 5; a still PNG
    /// without IEND shows nothing, with a tEXt after its IDAT it shows).
    @Test func aFrameCountsOnceACompleteChunkFollowsItsData() throws {
        let apng = APNGBuilder(width: 2, height: 2, frames: [red, green, red]).build()
        let lastData = Self.chunkOffsets(apng, "fdAT")[1]
        let length =
            Int(apng[lastData - 4]) << 24 | Int(apng[lastData - 3]) << 16 | Int(apng[lastData - 2]) << 8 | Int(apng[lastData - 1])
        let afterData = lastData + 8 + length
        #expect(try AnimatedImage(bytes: Array(apng.prefix(afterData))).frameCount == 2)
        #expect(try AnimatedImage(bytes: Array(apng.prefix(afterData + 6))).frameCount == 2)
        let text = APNGBuilder(width: 1, height: 1).chunk("tEXt", Array("a\0b".utf8))
        let followed = try AnimatedImage(bytes: Array(apng.prefix(afterData)) + text)
        #expect(followed.frameCount == 3)
        var still = APNGBuilder(width: 2, height: 2, frames: [red])
        still.writeAnimationControl = false
        let png = still.build()
        #expect(throws: AnimatedImageError.self) { try AnimatedImage(bytes: Array(png.dropLast(12))) }
        #expect(try AnimatedImage(bytes: Array(png.dropLast(12)) + text).frameCount == 1)
    }

    @Test func frameOutsideTheCanvasEndsTheAnimation() throws {
        var outside = green
        outside.rect = (1, 1, 2, 2)
        let image = try AnimatedImage(bytes: APNGBuilder(width: 2, height: 2, frames: [red, outside]).build())
        #expect(image.frameCount == 1)
        #expect(image.index.truncated)
    }

    @Test func disposeAndBlendAreRead() throws {
        var a = red
        var b = green
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
