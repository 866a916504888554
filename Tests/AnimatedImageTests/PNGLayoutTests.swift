import FlipbookTestSupport
import Testing

@testable import AnimatedImage

/// Every PNG layout decodes to the 8-bit RGBA Chromium shows, worked out here from the samples:
/// every colour type and bit depth (1–16), Adam7-interlaced or not, frames smaller than the
/// 8×8 interlace block and frames at offsets, tRNS, and 16-bit samples reduced to their high
/// byte (Chromium does not round).
@Suite("PNG layouts")
struct PNGLayoutTests {
    struct Layout: CustomTestStringConvertible, Sendable {
        var colorType: UInt8
        var bitDepth: Int
        var transparency: Bool
        var testDescription: String { "colour type \(colorType), \(bitDepth)-bit\(transparency ? ", tRNS" : "")" }
    }

    static let layouts: [Layout] = {
        let depths: [(UInt8, [Int])] = [(0, [1, 2, 4, 8, 16]), (2, [8, 16]), (3, [1, 2, 4, 8]), (4, [8, 16]), (6, [8, 16])]
        return depths.flatMap { color, list in
            list.flatMap { depth in
                (color == 4 || color == 6 ? [false] : [false, true]).map {
                    Layout(colorType: color, bitDepth: depth, transparency: $0)
                }
            }
        }
    }()

    /// Frame rectangles on a 13×11 canvas: under one interlace block, one block, across blocks,
    /// at offsets that are not multiples of 8, and the whole canvas.
    static let rects = [
        (0, 0, 1, 1), (5, 4, 3, 2), (12, 10, 1, 1), (6, 4, 7, 7), (0, 0, 8, 8), (2, 8, 9, 3),
        (1, 0, 1, 11), (0, 3, 13, 1), (0, 0, 13, 11),
    ]

    struct Sample {
        var writer: PNGSampleWriter
        var palette: [UInt8] = []
        var transparency: [UInt8] = []
        var random: SplitMix64

        init(_ layout: Layout, interlaced: Bool, seed: UInt64) {
            writer = PNGSampleWriter(colorType: layout.colorType, bitDepth: layout.bitDepth, interlaced: interlaced)
            random = SplitMix64(seed: seed)
            let maximum = (1 << layout.bitDepth) - 1
            if layout.colorType == 3 {
                let entries = 1 << layout.bitDepth
                palette = (0..<entries * 3).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                if layout.transparency {
                    transparency = (0..<entries / 2 + 1).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                }
            } else if layout.transparency {
                // A key colour; frames below use it, and colours one low bit away from it.
                let key = (0..<(layout.colorType == 0 ? 1 : 3)).map { _ in Int(random.next() % UInt64(maximum + 1)) }
                transparency = key.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            }
        }

        var key: [Int]? {
            guard !transparency.isEmpty, writer.colorType != 3 else { return nil }
            return stride(from: 0, to: transparency.count, by: 2).map { Int(transparency[$0]) << 8 | Int(transparency[$0 + 1]) }
        }

        /// Random samples for a frame; a few pixels take the key colour or the key colour with
        /// its lowest bit flipped (equal high bytes at 16 bits: only the full sample decides).
        mutating func samples(width: Int, height: Int) -> [Int] {
            let values = UInt64(writer.colorType == 3 ? palette.count / 3 : 1 << writer.bitDepth)
            var samples = (0..<width * height * writer.channels).map { _ in Int(random.next() % values) }
            if let key {
                for pixel in stride(from: 0, to: width * height, by: 3) {
                    let flip = pixel % 2 == 1 ? 1 : 0
                    for c in 0..<key.count { samples[pixel * key.count + c] = key[c] ^ (c == 0 ? flip : 0) }
                }
            }
            return samples
        }

        /// What Chromium shows for one pixel's samples.
        func rgba(_ s: ArraySlice<Int>) -> [UInt8] {
            let s = Array(s)
            let depth = writer.bitDepth
            func eight(_ v: Int) -> UInt8 {
                depth == 16 ? UInt8(v >> 8) : depth == 8 ? UInt8(v) : UInt8(v * 255 / ((1 << depth) - 1))
            }
            switch writer.colorType {
            case 0: return [eight(s[0]), eight(s[0]), eight(s[0]), key == s ? 0 : 255]
            case 2: return [eight(s[0]), eight(s[1]), eight(s[2]), key == s ? 0 : 255]
            case 3:
                let i = s[0]
                return [palette[i * 3], palette[i * 3 + 1], palette[i * 3 + 2], i < transparency.count ? transparency[i] : 255]
            case 4: return [eight(s[0]), eight(s[0]), eight(s[0]), eight(s[1])]
            default: return [eight(s[0]), eight(s[1]), eight(s[2]), eight(s[3])]
            }
        }

        func rgba(_ samples: [Int], count: Int) -> [UInt8] {
            let n = writer.channels
            return (0..<count).flatMap { rgba(samples[$0 * n..<($0 + 1) * n]) }
        }
    }

    @Test(arguments: layouts, [false, true])
    func framesAtOffsetsDecodeExactly(_ layout: Layout, interlaced: Bool) throws {
        let width = 13
        let height = 11
        var sample = Sample(layout, interlaced: interlaced, seed: UInt64(layout.colorType) << 8 | UInt64(layout.bitDepth))
        let background = sample.samples(width: width, height: height)
        let expectedBackground = sample.rgba(background, count: width * height)
        for (x, y, w, h) in Self.rects {
            let patch = sample.samples(width: w, height: h)
            var apng = LayoutAPNG(
                writer: sample.writer, width: width, height: height,
                palette: sample.palette, transparency: sample.transparency)
            apng.frames = [
                .init(width: width, height: height, samples: background),
                .init(x: x, y: y, width: w, height: h, samples: patch),
            ]
            let image = try AnimatedImage(bytes: apng.build())
            #expect(image.frameCount == 2)
            let renderer = FrameRenderer(image: image)
            #expect(try renderer.render(0).pixels == expectedBackground, "\(layout.testDescription) frame 0")
            var expected = expectedBackground
            let patchPixels = sample.rgba(patch, count: w * h)
            for row in 0..<h {
                let to = ((y + row) * width + x) * 4
                expected.replaceSubrange(to..<to + w * 4, with: patchPixels[row * w * 4..<(row + 1) * w * 4])
            }
            let frame = try renderer.render(1)
            #expect(frame.pixels == expected, "\(layout.testDescription), interlaced \(interlaced): \(w)×\(h) at (\(x),\(y))")
        }
    }

    @Test(arguments: layouts)
    func interlacedStillsOfEverySmallSizeDecodeExactly(_ layout: Layout) throws {
        var sample = Sample(layout, interlaced: true, seed: 99)
        for width in 1...9 {
            for height in [1, 2, 5, 8, 9] {
                let samples = sample.samples(width: width, height: height)
                var png = LayoutAPNG(
                    writer: sample.writer, width: width, height: height,
                    palette: sample.palette, transparency: sample.transparency)
                png.frames = [.init(width: width, height: height, samples: samples)]
                png.animated = false
                let image = try AnimatedImage(bytes: png.build())
                #expect(image.format == .png)
                #expect(
                    try FrameRenderer(image: image).render(0).pixels == sample.rgba(samples, count: width * height),
                    "\(layout.testDescription) \(width)×\(height)")
            }
        }
    }

    @Test func sixteenBitSamplesKeepTheirHighByte() throws {
        // Rounding (v / 257, libpng's simplified API) would give 0x11, 0x01, 0x02 and 0x31.
        let writer = PNGSampleWriter(colorType: 6, bitDepth: 16, interlaced: false)
        var png = LayoutAPNG(writer: writer, width: 2, height: 1)
        png.frames = [.init(width: 2, height: 1, samples: [0x10F0, 0x00FF, 0xFFFF, 0x7FFF, 0x20F0, 0x01FF, 0x0000, 0x30FF])]
        png.animated = false
        let pixels = try FrameRenderer(image: AnimatedImage(bytes: png.build())).render(0).pixels
        #expect(pixels == [0x10, 0x00, 0xFF, 0x7F, 0x20, 0x01, 0x00, 0x30])
    }
}
