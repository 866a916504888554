import CResample
import Dispatch
import FlipbookTestSupport
import Foundation
import Testing

@testable import AnimatedImage

/// Scaling frames (clipped-window Lanczos reducing, pixman enlarging): exact sizes, flat colours
/// stay flat, no fringe where alpha changes, deterministic.
@Suite("Resampler", .ownThreads)
struct ResamplerTests {
    func canvas(width: Int, height: Int, _ pixel: (Int, Int) -> [UInt8]) -> Canvas {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 4)
        for y in 0..<height { for x in 0..<width { pixels += pixel(x, y) } }
        return Canvas(width: width, height: height, pixels: pixels)
    }

    @Test func onlyReductionsByMoreThanFortyTimesShrinkFirst() {
        #expect(Resampler.shrinksFirst(width: 4000, height: 100, scaledWidth: 99, scaledHeight: 3))
        #expect(Resampler.shrinksFirst(width: 100, height: 4001, scaledWidth: 50, scaledHeight: 100))
        #expect(!Resampler.shrinksFirst(width: 4000, height: 4000, scaledWidth: 100, scaledHeight: 100))  // exactly 40×
        #expect(!Resampler.shrinksFirst(width: 1280, height: 720, scaledWidth: 320, scaledHeight: 180))
        #expect(!Resampler.shrinksFirst(width: 10, height: 10, scaledWidth: 500, scaledHeight: 500))
        #expect(!Resampler.shrinksFirst(width: 10, height: 10, scaledWidth: 0, scaledHeight: 5))
    }

    @Test(arguments: [
        (480, 270, 320, 180), (1280, 720, 160, 90), (100, 100, 250, 250), (7, 3, 1, 1), (1000, 10, 3, 1), (10, 10, 30, 5),
    ])
    func aFlatColourStaysFlatAtEverySize(sw: Int, sh: Int, dw: Int, dh: Int) throws {
        for alpha: UInt8 in [255, 128] {
            let flat = canvas(width: sw, height: sh) { _, _ in [200, 30, 90, alpha] }
            let scaled = try Resampler.scale(flat, width: dw, height: dh)
            #expect(scaled.width == dw && scaled.height == dh)
            for i in stride(from: 0, to: scaled.pixels.count, by: 4) {
                let px = Array(scaled.pixels[i..<i + 4])
                #expect(zip(px, [200, 30, 90, alpha]).allSatisfy { abs(Int($0) - Int($1)) <= 1 }, "\(px) at \(i / 4)")
            }
        }
    }

    /// Opaque saturated red beside fully transparent pixels whose colour is green (a colour no
    /// browser shows): scaled without premultiplying, the edge would turn yellow-brown.
    @Test(arguments: [(64, 64, 24, 24), (64, 64, 160, 160)])
    func aHardAlphaEdgeOverSaturatedColourHasNoFringe(sw: Int, sh: Int, dw: Int, dh: Int) throws {
        let edge = canvas(width: sw, height: sh) { x, _ in x < sw / 2 ? [255, 0, 0, 255] : [0, 255, 0, 0] }
        let scaled = try Resampler.scale(edge, width: dw, height: dh)
        var partial = 0
        for i in stride(from: 0, to: scaled.pixels.count, by: 4) where scaled.pixels[i + 3] > 0 {
            let (r, g, b, a) = (scaled.pixels[i], scaled.pixels[i + 1], scaled.pixels[i + 2], scaled.pixels[i + 3])
            #expect(r >= 254 && g == 0 && b == 0, "pixel \(i / 4) is \(r),\(g),\(b),\(a)")
            if a < 255 { partial += 1 }
        }
        #expect(partial > 0, "the edge is antialiased")
        // Far from the edge: the colour and the transparency are exact.
        let row = dh / 2 * dw * 4
        #expect(Array(scaled.pixels[row..<row + 4]) == [255, 0, 0, 255])
        #expect(scaled.pixels[row + (dw - 1) * 4 + 3] == 0)
    }

    @Test func scalingIsDeterministic() throws {
        let noise = canvas(width: 301, height: 173) { x, y in
            [UInt8((x * 7 + y * 13) & 255), UInt8((x * y) & 255), UInt8((x ^ y) & 255), UInt8((x + y * 3) & 255)]
        }
        let a = try Resampler.scale(noise, width: 97, height: 55)
        let b = try Resampler.scale(noise, width: 97, height: 55)
        #expect(a == b)
        let up1 = try Resampler.scale(noise, width: 400, height: 200)
        let up2 = try Resampler.scale(noise, width: 400, height: 200)
        #expect(up1 == up2)
    }

    /// Each thread keeps its most recent kernels (four): sizes scaled in turn — more of them
    /// than are kept, some sharing an input or an output length — give the same pixels in any
    /// order, on any thread, as each did first on a thread that had scaled nothing else.
    @Test func keptKernelsNeverMixSizes() throws {
        let sources = [(301, 173), (173, 301), (300, 173)].map { size in
            canvas(width: size.0, height: size.1) { x, y in [UInt8((x * 5 + y) & 255), UInt8((x ^ y) & 255), 80, 255] }
        }
        let targets = [(97, 55), (55, 97), (97, 97), (60, 40), (150, 86), (40, 60)]
        var first: [[Canvas]] = []
        for source in sources {
            var row: [Canvas] = []
            for target in targets {
                row.append(try Self.onANewThread { try Resampler.scale(source, width: target.0, height: target.1) })
            }
            first.append(row)
        }
        let expected = first
        // Source by source, then target by target (each source in turn to one size: the same
        // output length from another input length right after), forwards and backwards.
        var order = sources.indices.flatMap { s in targets.indices.map { (s, $0) } }
        order += targets.indices.flatMap { t in sources.indices.map { ($0, t) } }
        order += order.reversed()
        for (s, t) in order {
            let scaled = try Resampler.scale(sources[s], width: targets[t].0, height: targets[t].1)
            #expect(scaled == expected[s][t], "source \(s), target \(targets[t])")
        }
    }

    /// `body`'s result, run on a thread started for it (whose kept kernels are none).
    static func onANewThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<T, any Error>?
        let thread = Thread {
            result = Result { try body() }
            done.signal()
        }
        thread.start()
        done.wait()
        return try result!.get()
    }

    /// The horizontal pass this CPU runs (AVX2's 16-bit multiply-adds on split weights, on
    /// x86-64) gives the bytes the portable pass gives: every reduction from 1 to 61 columns of
    /// 61, and from 1280 to widths around the products' (160, 320, the 8× and 4× reductions),
    /// over noise with hard 0/255 steps where the kernel's lobes overshoot and clamp.
    @Test func theVectorisedPassIsThePortablePass() {
        var generator = SplitMix64(seed: 3)
        func noise(width: Int, height: Int) -> [UInt8] {
            (0..<width * height * 4).map { i in
                let r = generator.next()
                return r % 5 == 0 ? (r & 8 == 0 ? 0 : 255) : UInt8(truncatingIfNeeded: r >> 8) | (i % 4 == 3 ? 1 : 0)
            }
        }
        let narrow = noise(width: 61, height: 7)
        for dw in 1...61 {
            #expect(flipbook_resample_columns_agree(narrow, 61, 7, Int32(dw)) == 1, "61 → \(dw)")
        }
        let wide = noise(width: 1280, height: 3)
        for dw in [1, 2, 31, 159, 160, 161, 319, 320, 321, 640, 1279] {
            #expect(flipbook_resample_columns_agree(wide, 1280, 3, Int32(dw)) == 1, "1280 → \(dw)")
        }
    }

    @Test func theSameSizeIsTheSameCanvas() throws {
        let c = canvas(width: 5, height: 4) { x, y in [UInt8(x), UInt8(y), 9, 255] }
        #expect(try Resampler.scale(c, width: 5, height: 4) == c)
        #expect(throws: ResamplingError.self) { try Resampler.scale(c, width: 0, height: 4) }
    }
}
