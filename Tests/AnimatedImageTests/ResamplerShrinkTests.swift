import FlipbookTestSupport
import Testing

@testable import AnimatedImage

/// Reductions by more than 40×: box-shrunk first by whole factors that leave the kernel at least
/// 16× (the mean of each block of premultiplied samples; a partial last block averages what it
/// holds), then the clipped-window Lanczos-3 over the shrunk frame with its outputs centred where
/// the whole frame's are — checked against that pipeline written plainly here, in doubles.
@Suite("Resampler: large reductions shrink first")
struct ResamplerShrinkTests {
    /// Source and output sizes: factors 43–70001 across or down, blocks of 2 to 4,375 pixels,
    /// partial last blocks on either axis or both, an axis left as it is, one output row, frames
    /// shrunk in several strips of blocks (wider than 4,096 pixels) and blocks wider than a strip.
    static let sizes = [
        (4003, 97, 48, 1), (823, 45, 19, 1), (90, 2050, 2, 41), (1000, 10, 3, 1), (4100, 10, 100, 10),
        (1290, 90, 30, 2), (9001, 50, 100, 1), (70001, 3, 1, 1),
    ]

    /// The whole factor the reduction of `n` samples to `d` shrinks by: as large as leaves the
    /// kernel at least 16×.
    static func factor(_ n: Int, _ d: Int) -> Int { max(1, n / (d * 16)) }

    /// `pixels` (`width`×`height` RGBA) box-shrunk by kx×ky: each sample the rounded mean of its
    /// block's, the last blocks holding what remains.
    static func boxShrunk(_ pixels: [UInt8], width: Int, height: Int, kx: Int, ky: Int) -> Canvas {
        let w = (width + kx - 1) / kx
        let h = (height + ky - 1) / ky
        var sums = [Int](repeating: 0, count: w * h * 4)
        var counts = [Int](repeating: 0, count: w * h)
        for y in 0..<height {
            for x in 0..<width {
                let block = y / ky * w + x / kx
                counts[block] += 1
                for c in 0..<4 { sums[block * 4 + c] += Int(pixels[(y * width + x) * 4 + c]) }
            }
        }
        let out = sums.indices.map { i in UInt8((sums[i] + counts[i / 4] / 2) / counts[i / 4]) }
        return Canvas(width: w, height: h, pixels: out)
    }

    /// `canvas` premultiplied into 8 bits, rounded to nearest.
    static func premultiplied(_ canvas: Canvas) -> [UInt8] {
        var out = canvas.pixels
        for i in stride(from: 0, to: out.count, by: 4) {
            let a = Int(out[i + 3])
            for c in 0..<3 { out[i + c] = UInt8((Int(out[i + c]) * a + 127) / 255) }
        }
        return out
    }

    /// The plain pipeline: `canvas` (premultiplied unless opaque) shrunk, then reduced by the
    /// clipped-window reference over the span the shrunk pixels cover. Premultiplied samples.
    static func reference(_ canvas: Canvas, width: Int, height: Int) -> [UInt8] {
        let kx = factor(canvas.width, width)
        let ky = factor(canvas.height, height)
        let shrunk = boxShrunk(premultiplied(canvas), width: canvas.width, height: canvas.height, kx: kx, ky: ky)
        return ResamplerReferenceTests.reference(
            shrunk, width: width, height: height, spanX: Double(canvas.width) / Double(kx),
            spanY: Double(canvas.height) / Double(ky))
    }

    /// Opaque: hard bands about one and a half output pixels wide across and down (every output
    /// near an edge, so an output centred a few hundredths of a pixel off moves by several
    /// levels), and blue texture inside.
    static func banded(width: Int, height: Int, outputWidth: Int, outputHeight: Int) -> Canvas {
        let bandX = max(1, width * 3 / (outputWidth * 2))
        let bandY = max(1, height * 3 / (outputHeight * 2))
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                pixels[i] = x / bandX % 2 == 0 ? 230 : 20
                pixels[i + 1] = y / bandY % 2 == 0 ? 10 : 240
                pixels[i + 2] = UInt8((x * 37 + y * 11) % 256)
            }
        }
        return Canvas(width: width, height: height, pixels: pixels)
    }

    /// Opaque frames — the reference tests' (hard edges on the border, a texture whose detail a
    /// plain kernel and a box-then-kernel reduction render differently) and bands: every sample
    /// within one level of the reference (fixed-point weights against doubles may round a value
    /// the other way).
    @Test(arguments: sizes)
    func anOpaqueReductionMatchesTheReference(sw: Int, sh: Int, dw: Int, dh: Int) throws {
        #expect(Resampler.shrinksFirst(width: sw, height: sh, scaledWidth: dw, scaledHeight: dh), "shrinks first")
        let frames = [
            ResamplerReferenceTests.bordered(width: sw, height: sh),
            Self.banded(width: sw, height: sh, outputWidth: dw, outputHeight: dh),
        ]
        for (f, frame) in frames.enumerated() {
            let scaled = try Resampler.scale(frame, width: dw, height: dh)
            let expected = Self.reference(frame, width: dw, height: dh)
            var off = 0
            for (i, (got, want)) in zip(scaled.pixels, expected).enumerated() where abs(Int(got) - Int(want)) > 1 {
                if off < 5 {
                    Issue.record("frame \(f), pixel (\(i / 4 % dw), \(i / 4 / dw)) sample \(i % 4): \(got), reference \(want)")
                }
                off += 1
            }
            #expect(off == 0, "frame \(f): \(off) of \(expected.count) samples more than one level off")
            #expect(stride(from: 3, to: scaled.pixels.count, by: 4).allSatisfy { scaled.pixels[$0] == 255 }, "stays opaque")
        }
    }

    /// Noise with alpha 0 and 255 steps and translucent pixels: the output, premultiplied again,
    /// within two levels of the reference's premultiplied samples (one for fixed point against
    /// doubles, one for unpremultiplying and premultiplying again), alpha within one; a colour the
    /// kernel's overshoot puts above its alpha clamps (to the alpha, premultiplied).
    @Test(arguments: sizes)
    func aTranslucentReductionMatchesTheReference(sw: Int, sh: Int, dw: Int, dh: Int) throws {
        let frame = ResamplerPartsTests.noise(width: sw, height: sh, opaque: false, seed: UInt64(sw * 7 + sh))
        let scaled = try Resampler.scale(frame, width: dw, height: dh)
        let expected = Self.reference(frame, width: dw, height: dh)
        var off = 0
        for i in stride(from: 0, to: expected.count, by: 4) {
            let alpha = Int(scaled.pixels[i + 3])
            let colours = (0..<3).map { c in
                abs((Int(scaled.pixels[i + c]) * alpha + 127) / 255 - min(Int(expected[i + c]), Int(expected[i + 3])))
            }
            if abs(alpha - Int(expected[i + 3])) <= 1 && colours.allSatisfy({ $0 <= 2 }) { continue }
            if off < 5 {
                Issue.record(
                    "pixel \(i / 4): \(Array(scaled.pixels[i..<i + 4])), reference (premultiplied) \(Array(expected[i..<i + 4]))")
            }
            off += 1
        }
        #expect(off == 0, "\(off) of \(expected.count / 4) pixels off")
    }

    /// Opaque saturated red beside fully transparent green (a colour no browser shows): shrunk
    /// without premultiplying, the blocks on the edge would turn brown.
    @Test func aHardAlphaEdgeHasNoFringeWhenShrunkFirst() throws {
        let (sw, sh, dw, dh) = (4200, 60, 60, 1)
        let pixels = (0..<sh).flatMap { _ in (0..<sw).flatMap { x in x < sw / 2 + 17 ? [255, 0, 0, 255] : [0, 255, 0, 0] } }
        let scaled = try Resampler.scale(Canvas(width: sw, height: sh, pixels: pixels.map { UInt8($0) }), width: dw, height: dh)
        var partial = 0
        for i in stride(from: 0, to: scaled.pixels.count, by: 4) where scaled.pixels[i + 3] > 0 {
            let (r, g, b, a) = (scaled.pixels[i], scaled.pixels[i + 1], scaled.pixels[i + 2], scaled.pixels[i + 3])
            #expect(r >= 254 && g == 0 && b == 0, "pixel \(i / 4) is \(r),\(g),\(b),\(a)")
            if a < 255 { partial += 1 }
        }
        #expect(partial > 0, "the edge is antialiased")
        #expect(Array(scaled.pixels[0..<4]) == [255, 0, 0, 255])
        #expect(scaled.pixels[(dw - 1) * 4 + 3] == 0)
    }

    /// A thread keeps its most recent kernels; a shrunk frame's kernel covers a fractional span
    /// (801 pixels standing for 800.6), another scaling's has the same lengths and a whole span
    /// (801 → 48 directly): each, right after the other, gives what it gives on a fresh thread.
    @Test func keptKernelsTellSpansApart() throws {
        let shrinks = ResamplerReferenceTests.bordered(width: 4003, height: 97)
        let direct = ResamplerReferenceTests.bordered(width: 801, height: 17)
        let shrunkFresh = try ResamplerTests.onANewThread { try Resampler.scale(shrinks, width: 48, height: 1) }
        let directFresh = try ResamplerTests.onANewThread { try Resampler.scale(direct, width: 48, height: 1) }
        #expect(shrunkFresh != directFresh)
        let inTurn = try ResamplerTests.onANewThread {
            [
                try Resampler.scale(shrinks, width: 48, height: 1), try Resampler.scale(direct, width: 48, height: 1),
                try Resampler.scale(shrinks, width: 48, height: 1),
            ]
        }
        #expect(inTurn == [shrunkFresh, directFresh, shrunkFresh])
    }
}
