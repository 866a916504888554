import Foundation
import Testing

@testable import AnimatedImage

/// Reductions against a plain Lanczos-3 written here in Pillow's conventions (issue 21's quality
/// reference): horizontally first, 8 bits in between, and at the edges the window clipped to the
/// frame with its weights renormalised — not the frame extended by copying its edge pixels.
@Suite("Resampler against a clipped-window Lanczos-3")
struct ResamplerReferenceTests {
    static func lanczos3(_ x: Double) -> Double {
        if x == 0 { return 1 }
        if abs(x) >= 3 { return 0 }
        return 3 * sin(Double.pi * x) * sin(Double.pi * x / 3) / (Double.pi * Double.pi * x * x)
    }

    /// For each of `output` samples: the input samples within the stretched kernel's reach of its
    /// centre, and their weights divided by their sum.
    static func weights(input: Int, output: Int) -> [[(index: Int, weight: Double)]] {
        let scale = Double(input) / Double(output)
        return (0..<output).map { i in
            let centre = (Double(i) + 0.5) * scale
            let taps = (0..<input).map { ($0, lanczos3((Double($0) + 0.5 - centre) / scale)) }.filter { $0.1 != 0 }
            let sum = taps.reduce(0) { $0 + $1.1 }
            return taps.map { (index: $0.0, weight: $0.1 / sum) }
        }
    }

    static func byte(_ value: Double) -> UInt8 { UInt8(min(255, max(0, value.rounded()))) }

    /// `canvas` (opaque) reduced to `width`×`height` by the reference.
    static func reference(_ canvas: Canvas, width: Int, height: Int) -> [UInt8] {
        let across = weights(input: canvas.width, output: width)
        var middle = [UInt8](repeating: 0, count: width * canvas.height * 4)
        for y in 0..<canvas.height {
            for x in 0..<width {
                for c in 0..<4 {
                    let sum = across[x].reduce(0.0) {
                        $0 + Double(canvas.pixels[(y * canvas.width + $1.index) * 4 + c]) * $1.weight
                    }
                    middle[(y * width + x) * 4 + c] = byte(sum)
                }
            }
        }
        let down = weights(input: canvas.height, output: height)
        var out = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for i in 0..<width * 4 {
                out[y * width * 4 + i] = byte(down[y].reduce(0.0) { $0 + Double(middle[$1.index * width * 4 + i]) * $1.weight })
            }
        }
        return out
    }

    /// Opaque: a white first column and a blue first row (hard edges on the frame's border, where
    /// the edge conventions differ most), and a deterministic texture inside.
    static func bordered(width: Int, height: Int) -> Canvas {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                if x == 0 {
                    pixels += [255, 255, 255, 255]
                } else if y == 0 {
                    pixels += [0, 0, 255, 255]
                } else {
                    pixels += [UInt8((x * 37 + y * 11) % 256), UInt8((x * y * 5) % 256), x % 7 < 3 ? 230 : 20, 255]
                }
            }
        }
        return Canvas(width: width, height: height, pixels: pixels)
    }

    /// Frames so small that every output's window is clipped: within one level everywhere
    /// (rounding of fixed-point against double weights).
    @Test(arguments: [(13, 7, 5, 3), (6, 6, 3, 3), (24, 10, 8, 4)])
    func aSmallFrameMatchesTheReference(sw: Int, sh: Int, dw: Int, dh: Int) throws {
        let frame = Self.bordered(width: sw, height: sh)
        let scaled = try Resampler.scale(frame, width: dw, height: dh)
        let expected = Self.reference(frame, width: dw, height: dh)
        for (i, (got, want)) in zip(scaled.pixels, expected).enumerated() {
            #expect(abs(Int(got) - Int(want)) <= 1, "sample \(i % 4) of pixel \(i / 4): \(got), reference \(want)")
        }
    }

    /// Larger frames, where libvips computes the inner rows of the vertical pass (with coarser
    /// weights): the top and bottom rows, which it leaves to the clipped window, within one level
    /// of the reference, and the whole frame within issue 21's 45 dB of it.
    @Test(arguments: [(90, 60, 30, 20), (200, 120, 64, 38), (100, 100, 50, 50)])
    func theEdgesMatchTheReference(sw: Int, sh: Int, dw: Int, dh: Int) throws {
        let frame = Self.bordered(width: sw, height: sh)
        let scaled = try Resampler.scale(frame, width: dw, height: dh)
        let expected = Self.reference(frame, width: dw, height: dh)
        var squares = 0.0
        for y in 0..<dh {
            for x in 0..<dw {
                for c in 0..<4 {
                    let i = (y * dw + x) * 4 + c
                    let difference = Int(scaled.pixels[i]) - Int(expected[i])
                    squares += Double(difference * difference)
                    if y == 0 || y == dh - 1 {
                        #expect(abs(difference) <= 1, "(\(x), \(y)) sample \(c): \(scaled.pixels[i]), reference \(expected[i])")
                    }
                }
            }
        }
        let psnr = 10 * log10(255.0 * 255.0 / max(squares / Double(dw * dh * 4), 1e-9))
        #expect(psnr >= 45, "PSNR \(psnr) dB")
    }
}
