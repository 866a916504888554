import Testing

@testable import AnimatedImage

/// Where a frame's image data ends, as Chromium 156 decides it (each case measured with
/// `browser-frames` on the same layout; found by the encoder matrix's cut and bit-flipped
/// copies): a frame's data is one run of data chunks, ended by the first other chunk as soon as
/// that chunk's 8-byte header is in the file.
@Suite("APNG data runs")
struct APNGDataRunTests {
    let png = APNGBuilder(width: 2, height: 2)
    let red = solid(255, 0, 0, 255, count: 4), green = solid(0, 255, 0, 255, count: 4)
    let blue = solid(0, 0, 255, 255, count: 4)

    var head: [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + png.chunk("IHDR", png.be32(2) + png.be32(2) + [8, 6, 0, 0, 0])
            + png.chunk("acTL", png.be32(3) + png.be32(0))
    }
    func fcTL(_ sequence: Int) -> [UInt8] {
        png.chunk(
            "fcTL",
            png.be32(sequence) + png.be32(2) + png.be32(2) + png.be32(0) + png.be32(0)
                + png.be16(1) + png.be16(10) + [0, 0])
    }
    func data(_ pixels: [UInt8]) -> [UInt8] { APNGBuilder.compress(pixels, width: 2, height: 2) }
    func fdAT(_ sequence: Int, _ payload: [UInt8]) -> [UInt8] { png.chunk("fdAT", png.be32(sequence) + payload) }
    var text: [UInt8] { png.chunk("tEXt", Array("a\0b".utf8)) }
    var end: [UInt8] { png.chunk("IEND", []) }
    /// Frame 0 (red, IDAT) and frame 1 (green, fdAT 2): the prefix every case starts with.
    var twoFrames: [UInt8] { head + fcTL(0) + png.chunk("IDAT", data(red)) + fcTL(1) + fdAT(2, data(green)) }

    func frameCount(_ bytes: [UInt8]) throws -> Int { try AnimatedImage(bytes: bytes).frameCount }

    /// A chunk of any type after frame 1's data (an unknown one, even with a bad CRC; a tEXt)
    /// ends its run: a later fdAT ends the frame list, whatever its sequence number, and frame 1
    /// stands on the data it had.
    @Test func aDataChunkAfterAnotherChunkEndsTheFrameList() throws {
        let unknown = png.chunk("vcTL", Array(repeating: 7, count: 26))
        var badCRC = unknown
        badCRC[badCRC.count - 1] ^= 1
        for bytes in [unknown, badCRC] {
            let image = try AnimatedImage(bytes: twoFrames + bytes + fdAT(4, data(blue)) + end)
            #expect(image.frameCount == 2)
            #expect(image.index.truncated)
            #expect(Array(try FrameRenderer(image: image).render(1).pixels.prefix(4)) == [0, 255, 0, 255])
        }
        // In sequence, after a tEXt: Chromium still ends the list there (it showed 2 of 3 frames).
        #expect(try frameCount(twoFrames + text + fdAT(3, data(blue)) + fcTL(4) + fdAT(5, data(blue)) + end) == 2)
        #expect(try frameCount(twoFrames + text + fdAT(3, []) + end) == 2)
        // Control: a tEXt between frames changes nothing.
        #expect(try frameCount(twoFrames + text + fcTL(3) + fdAT(4, data(blue)) + end) == 3)
    }

    /// An out-of-sequence fdAT inside the run (no other chunk between) takes the frame with it.
    @Test func aSequenceBreakInsideTheRunDropsTheFrame() throws {
        #expect(try frameCount(twoFrames + fdAT(4, data(blue)) + end) == 1)
    }

    /// A run cut by another chunk leaves the frame with part of its data: not shown.
    @Test func aRunSplitByAnotherChunkIsIncomplete() throws {
        let green1 = data(green)
        let half = green1.count / 2
        let split = head + fcTL(0) + png.chunk("IDAT", data(red)) + fcTL(1) + fdAT(2, Array(green1[..<half]))
        #expect(try frameCount(split + text + fdAT(3, Array(green1[half...])) + fcTL(4) + fdAT(5, data(blue)) + end) == 1)
        #expect(try frameCount(split + fdAT(3, Array(green1[half...])) + fcTL(4) + fdAT(5, data(blue)) + end) == 3)
        // Frame 0's IDAT run split by a tEXt: nothing to show, in an APNG as in a still PNG.
        let red0 = data(red)
        let cut = red0.count / 2
        let idats = png.chunk("IDAT", Array(red0[..<cut])) + text + png.chunk("IDAT", Array(red0[cut...]))
        #expect(throws: AnimatedImageError.self) {
            try AnimatedImage(bytes: head + fcTL(0) + idats + fcTL(1) + fdAT(2, data(green)) + end)
        }
        var still = APNGBuilder(width: 2, height: 2)
        still.writeAnimationControl = false
        let stillHead = Array(still.build().prefix(33))
        #expect(throws: AnimatedImageError.self) { try AnimatedImage(bytes: stillHead + idats + end) }
        #expect(try frameCount(stillHead + png.chunk("IDAT", red0) + end) == 1)
    }

    /// The file ends inside the chunk after a frame's data: the frame shows once that chunk's
    /// 8-byte header is there and names another type (fcTL, tEXt, IEND), not before, and not
    /// when it is an fdAT (the data may go on).
    @Test func aCutChunkWhoseHeaderIsThereEndsTheRun() throws {
        let next = fcTL(3)
        #expect(try frameCount(twoFrames + next.prefix(7)) == 1)
        #expect(try frameCount(twoFrames + next.prefix(8)) == 2)
        #expect(try frameCount(twoFrames + next.prefix(20)) == 2)
        #expect(try frameCount(twoFrames + text.prefix(8)) == 2)
        #expect(try frameCount(twoFrames + fdAT(3, data(blue)).prefix(8)) == 1)
        #expect(try AnimatedImage(bytes: twoFrames + next.prefix(8)).index.truncated)
        var still = APNGBuilder(width: 2, height: 2, frames: [.init(rect: (0, 0, 2, 2), pixels: red)])
        still.writeAnimationControl = false
        let whole = still.build()
        #expect(try frameCount(Array(whole.dropLast(4))) == 1)  // IEND without its CRC
        #expect(throws: AnimatedImageError.self) { try AnimatedImage(bytes: Array(whole.dropLast(5))) }
    }
}
