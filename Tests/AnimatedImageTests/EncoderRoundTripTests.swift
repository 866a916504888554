import FlipbookTestSupport
import Foundation
import Testing

@testable import AnimatedImage

/// Animations made by real encoders from known frames: optimising encoders (gifsicle -O3,
/// img2webp, apngasm) store partial frames with disposal and blending; Flipbook must composite
/// them back into exactly the frames they were made from.
@Suite("Real encoders", .ownThreads)
struct EncoderRoundTripTests {
    /// Frames of a small scene: a static background with a moving square and a blinking dot,
    /// so encoders find partial frames to optimise. `alpha` punches a transparent hole.
    static func sceneFrames(count: Int, width: Int = 48, height: Int = 32, alpha: Bool) -> [Canvas] {
        (0..<count).map { f in
            var pixels = [UInt8](repeating: 0, count: width * height * 4)
            for y in 0..<height {
                for x in 0..<width {
                    var c: [UInt8] = [UInt8(40 + (x / 8) * 20), UInt8(60 + (y / 8) * 30), 90, 255]
                    if x >= 2 * f % (width - 8), x < 2 * f % (width - 8) + 8, y >= 10, y < 18 { c = [250, 200, 20, 255] }
                    if f % 3 == 0, x == 40, y == 4 { c = [255, 255, 255, 255] }
                    if alpha, x < 6, y < 6 { c = [0, 0, 0, 0] }
                    if alpha, x >= 6, x < 10, y < 6 { c = [200, 30, 30, 128] }
                    pixels.replaceSubrange((y * width + x) * 4..<(y * width + x) * 4 + 4, with: c)
                }
            }
            return Canvas(width: width, height: height, pixels: pixels)
        }
    }

    static func writeFrames(_ frames: [Canvas], to directory: URL) throws -> [String] {
        try frames.enumerated().map { i, canvas in
            let path = directory.appendingPathComponent(String(format: "f%03d.png", i)).path
            try Data(try PNGEncoder().encode(canvas)).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    static func render(_ path: String) throws -> (AnimatedImage, [Canvas]) {
        let image = try AnimatedImage(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        let renderer = FrameRenderer(image: image)
        return (image, try (0..<image.frameCount).map { try renderer.render($0) })
    }

    @Test func gifsicleOptimisedGIFCompositesToTheSameFrames() throws {
        let dir = try ExternalTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let frames = try Self.writeFrames(Self.sceneFrames(count: 12, alpha: false), to: dir)
        let plain = dir.appendingPathComponent("plain.gif").path
        let optimised = dir.appendingPathComponent("optimised.gif").path
        try ExternalTool.run("convert", ["-delay", "7", "-loop", "0"] + frames + [plain], package: "imagemagick")
        try ExternalTool.run("gifsicle", ["-O3", plain, "-o", optimised], package: "gifsicle")
        let (plainImage, expected) = try Self.render(plain)
        let (optimisedImage, actual) = try Self.render(optimised)
        #expect(plainImage.frameCount == 12)
        #expect(optimisedImage.frameCount == 12)
        #expect(optimisedImage.timeline.rawDelaysMs == [Int](repeating: 70, count: 12))
        // gifsicle really did store partial frames.
        #expect(optimisedImage.index.frames.dropFirst().contains { !$0.rect.contains(optimisedImage.index.canvasRect) })
        for i in 0..<12 {
            #expect(actual[i] == expected[i], "frame \(i)")
            let cold = try FrameRenderer(image: optimisedImage).render(i)
            #expect(cold == expected[i], "frame \(i) from cold")
        }
    }

    @Test func img2webpLosslessAnimationCompositesToTheSourceFrames() throws {
        let dir = try ExternalTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = Self.sceneFrames(count: 10, alpha: true)
        let frames = try Self.writeFrames(source, to: dir)
        let output = dir.appendingPathComponent("anim.webp").path
        try ExternalTool.run("img2webp", ["-loop", "3", "-lossless", "-d", "80"] + frames + ["-o", output], package: "webp")
        let (image, actual) = try Self.render(output)
        #expect(image.format == .webp)
        #expect(image.frameCount == 10)
        #expect(image.timeline.playCount == 3)
        #expect(image.timeline.rawDelaysMs.allSatisfy { $0 == 80 })
        for i in 0..<10 {
            let comparison = PixelComparison(
                ours: actual[i].pixels, reference: source[i].pixels, width: 48,
                tolerance: 0, partialTolerance: 0)
            #expect(comparison.matches, "frame \(i): \(comparison.summary)")
        }
    }

    @Test func apngasmAnimationCompositesToTheSourceFrames() throws {
        let dir = try ExternalTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = Self.sceneFrames(count: 10, alpha: true)
        let frames = try Self.writeFrames(source, to: dir)
        let output = dir.appendingPathComponent("anim.png").path
        try ExternalTool.run("apngasm", [output] + frames + ["1", "20"], package: "apngasm")
        let (image, actual) = try Self.render(output)
        #expect(image.format == .apng)
        #expect(image.frameCount == 10)
        #expect(image.timeline.rawDelaysMs.allSatisfy { $0 == 50 })
        for i in 0..<10 {
            let comparison = PixelComparison(
                ours: actual[i].pixels, reference: source[i].pixels, width: 48,
                tolerance: 0, partialTolerance: 0)
            #expect(comparison.matches, "frame \(i): \(comparison.summary)")
        }
    }
}
