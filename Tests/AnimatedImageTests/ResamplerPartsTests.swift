import FlipbookTestSupport
import Testing

@testable import AnimatedImage

/// Scaling part of a frame (what previews and storyboards do for each frame that changed only
/// in part): a part is exactly those pixels of the whole frame's scaling, it reads only the rows
/// it says, and a frame made from the previous frame's scaling with the affected part scaled
/// again is exactly the frame scaled whole.
@Suite("Resampler parts")
struct ResamplerPartsTests {
    /// Source and output sizes: both axes reduced (the products' 4× and 8×, odd factors),
    /// one axis only, the same size, a one-pixel output.
    static let sizes = [
        (1280, 720, 320, 180), (480, 270, 160, 90), (301, 173, 97, 55), (64, 48, 64, 20), (64, 48, 21, 48),
        (40, 30, 40, 30), (37, 5, 1, 1),
    ]

    static func noise(width: Int, height: Int, opaque: Bool, seed: UInt64) -> Canvas {
        var generator = SplitMix64(seed: seed)
        let pixels = (0..<width * height * 4).map { i -> UInt8 in
            if i % 4 == 3 && opaque { return 255 }
            let r = generator.next()
            // Hard 0/255 steps where the kernel's lobes overshoot and clamp, and alpha 0.
            return r % 5 == 0 ? (r & 8 == 0 ? 0 : 255) : UInt8(truncatingIfNeeded: r >> 8)
        }
        return Canvas(width: width, height: height, pixels: pixels)
    }

    static func randomRect(inWidth width: Int, height: Int, _ generator: inout SplitMix64) -> PixelRect {
        let x = Int(generator.next() % UInt64(width))
        let y = Int(generator.next() % UInt64(height))
        let w = 1 + Int(generator.next() % UInt64(width - x))
        let h = 1 + Int(generator.next() % UInt64(height - y))
        return PixelRect(x: x, y: y, width: w, height: h)
    }

    @Test(arguments: sizes)
    func aPartIsThosePixelsOfTheWholeScaling(sw: Int, sh: Int, dw: Int, dh: Int) throws {
        var generator = SplitMix64(seed: UInt64(sw * 31 + dw))
        for opaque in [true, false] {
            let source = Self.noise(width: sw, height: sh, opaque: opaque, seed: UInt64(sh + dh))
            let whole = try Resampler.scale(source, width: dw, height: dh)
            var parts = [PixelRect(x: 0, y: 0, width: dw, height: dh)]
            for _ in 0..<6 { parts.append(Self.randomRect(inWidth: dw, height: dh, &generator)) }
            for part in parts {
                let scaled = try Resampler.scale(source, width: dw, height: dh, only: part, opaque: opaque)
                #expect(scaled.pixels == whole.copy(part), "\(sw)×\(sh) → \(dw)×\(dh), part \(part), opaque \(opaque)")
                // Only the rows it names are read: the others may hold anything.
                let rows = try #require(
                    Resampler.rowsRead(for: part, sourceWidth: sw, sourceHeight: sh, width: dw, height: dh))
                var blanked = Canvas(width: sw, height: sh)
                blanked.copyRows(rows, from: source)
                let fromRows = try Resampler.scale(blanked, width: dw, height: dh, only: part, opaque: opaque)
                #expect(fromRows == scaled, "rows \(rows) for part \(part)")
            }
        }
    }

    @Test(arguments: sizes)
    func theAffectedPartScaledAgainGivesTheWholeFrame(sw: Int, sh: Int, dw: Int, dh: Int) throws {
        var generator = SplitMix64(seed: UInt64(sh * 17 + dh))
        for opaque in [true, false] {
            let before = Self.noise(width: sw, height: sh, opaque: opaque, seed: 7)
            var previous = try Resampler.scale(before, width: dw, height: dh)
            var current = before
            for step in 0..<8 {
                let changed = Self.randomRect(inWidth: sw, height: sh, &generator)
                let patch = Self.noise(width: changed.width, height: changed.height, opaque: opaque, seed: UInt64(step))
                current.paste(patch.pixels, into: changed)
                let affected = try #require(
                    Resampler.affected(by: changed, sourceWidth: sw, sourceHeight: sh, width: dw, height: dh))
                #expect(!affected.isEmpty && PixelRect(x: 0, y: 0, width: dw, height: dh).contains(affected))
                let part = try Resampler.scale(current, width: dw, height: dh, only: affected, opaque: opaque)
                previous.paste(part.pixels, into: affected)
                #expect(previous == (try Resampler.scale(current, width: dw, height: dh)), "step \(step), \(changed)")
            }
        }
    }

    @Test func enlargementsAndShrinksFirstAreScaledWhole() throws {
        let changed = PixelRect(x: 1, y: 1, width: 2, height: 2)
        #expect(Resampler.affected(by: changed, sourceWidth: 10, sourceHeight: 10, width: 20, height: 10) == nil)
        #expect(Resampler.affected(by: changed, sourceWidth: 10, sourceHeight: 10, width: 5, height: 11) == nil)
        #expect(Resampler.affected(by: changed, sourceWidth: 4100, sourceHeight: 10, width: 100, height: 10) == nil)
        #expect(Resampler.rowsRead(for: changed, sourceWidth: 10, sourceHeight: 10, width: 20, height: 20) == nil)
        let frame = Self.noise(width: 10, height: 10, opaque: true, seed: 1)
        #expect(throws: ResamplingError.self) {
            try Resampler.scale(frame, width: 20, height: 20, only: changed, opaque: true)
        }
        #expect(throws: ResamplingError.self) {
            try Resampler.scale(frame, width: 5, height: 5, only: PixelRect(x: 3, y: 3, width: 3, height: 1), opaque: true)
        }
    }

    /// A change far from an output pixel's window leaves it out; a 4× reduction's windows span
    /// 24 source pixels, so a one-pixel change reaches 7 outputs on each axis at most.
    @Test func aSmallChangeAffectsOnlyTheOutputsItReaches() throws {
        let affected = try #require(
            Resampler.affected(
                by: PixelRect(x: 640, y: 360, width: 1, height: 1), sourceWidth: 1280, sourceHeight: 720, width: 320,
                height: 180))
        #expect(affected.width <= 7 && affected.height <= 7)
        #expect(affected.contains(PixelRect(x: 160, y: 90, width: 1, height: 1)))
    }
}
