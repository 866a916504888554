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
    /// centre, and their weights divided by their sum. The `input` samples cover `span` (their
    /// count unless the last stands for less than a whole one, as a box shrink's last block does).
    static func weights(input: Int, output: Int, span: Double? = nil) -> [[(index: Int, weight: Double)]] {
        let scale = (span ?? Double(input)) / Double(output)
        return (0..<output).map { i in
            let centre = (Double(i) + 0.5) * scale
            let taps = (0..<input).map { ($0, lanczos3((Double($0) + 0.5 - centre) / scale)) }.filter { $0.1 != 0 }
            let sum = taps.reduce(0) { $0 + $1.1 }
            return taps.map { (index: $0.0, weight: $0.1 / sum) }
        }
    }

    static func byte(_ value: Double) -> UInt8 { UInt8(min(255, max(0, value.rounded()))) }

    /// `canvas` (opaque, or premultiplied) reduced to `width`×`height` by the reference; its pixels
    /// cover `spanX`×`spanY` (by default its size).
    static func reference(
        _ canvas: Canvas, width: Int, height: Int, spanX: Double? = nil, spanY: Double? = nil
    ) -> [UInt8] {
        let across = weights(input: canvas.width, output: width, span: spanX)
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
        let down = weights(input: canvas.height, output: height, span: spanY)
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

    /// Every output sample within one level of the reference (fixed-point weights against doubles
    /// may round a value the other way): small frames, where every window is clipped, and larger
    /// ones with an inside.
    @Test(arguments: [
        (13, 7, 5, 3), (6, 6, 3, 3), (24, 10, 8, 4), (90, 60, 30, 20), (200, 120, 64, 38), (100, 100, 50, 50),
    ])
    func aReductionMatchesTheReference(sw: Int, sh: Int, dw: Int, dh: Int) throws {
        let frame = Self.bordered(width: sw, height: sh)
        let scaled = try Resampler.scale(frame, width: dw, height: dh)
        let expected = Self.reference(frame, width: dw, height: dh)
        var off = 0
        for (i, (got, want)) in zip(scaled.pixels, expected).enumerated() where abs(Int(got) - Int(want)) > 1 {
            if off < 5 { Issue.record("pixel (\(i / 4 % dw), \(i / 4 / dw)) sample \(i % 4): \(got), reference \(want)") }
            off += 1
        }
        #expect(off == 0, "\(off) of \(expected.count) samples more than one level off")
        #expect(stride(from: 3, to: scaled.pixels.count, by: 4).allSatisfy { scaled.pixels[$0] == 255 }, "stays opaque")
    }
}
