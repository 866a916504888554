import CZlib
import FlipbookTestSupport
import Foundation
import Testing

@testable import AnimatedImage

/// Served frames carry the source's colour-space information (PNG `cICP`, `iCCP`, `sRGB`,
/// `gAMA`, `cHRM`; a still WebP's `ICCP` as `iCCP`) with pixel values unchanged, so a browser
/// converts a frame as it converts the original. (That Chromium then shows the same colours is checked in
/// a real browser by Tests/browser/colour_check.py.)
@Suite("Colour-space chunks", .ownThreads)
struct ColorSpaceTests {
    /// A profile-shaped blob: what matters here is that its bytes arrive unchanged.
    static let profile: [UInt8] = (0..<600).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }

    static func zlib(_ bytes: [UInt8]) -> [UInt8] {
        var size = compressBound(uLong(bytes.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        _ = compress2(&out, &size, bytes, uLong(bytes.count), 9)
        return Array(out[0..<Int(size)])
    }

    static func inflate(_ stream: [UInt8], count: Int) -> [UInt8]? {
        var size = uLong(count)
        var out = [UInt8](repeating: 0, count: count)
        guard uncompress(&out, &size, stream, uLong(stream.count)) == Z_OK, Int(size) == count else { return nil }
        return out
    }

    static let pngChunks: [(String, [UInt8])] = [
        ("gAMA", [0, 1, 0x86, 0xA0]),  // 1.0
        ("cHRM", (0..<32).map { UInt8($0 * 5) }),
        ("iCCP", Array("Test profile".utf8) + [0, 0] + zlib(profile)),
        ("sRGB", [1]),
        ("cICP", [12, 13, 0, 1]),  // Display P3, sRGB transfer, full range
        ("gAMA", [0, 0, 0xB1, 0x8F]),  // a second gAMA: the first one counts
    ]

    func animation(withChunks chunks: [(String, [UInt8])], colorType: UInt8 = 6) -> [UInt8] {
        let writer = PNGSampleWriter(colorType: colorType, bitDepth: 8, interlaced: false)
        var apng = LayoutAPNG(writer: writer, width: 5, height: 4)
        apng.extraChunks = chunks
        var random = SplitMix64(seed: 7)
        apng.frames = (0..<3).map { _ in
            .init(width: 5, height: 4, samples: (0..<5 * 4 * writer.channels).map { _ in Int(random.next() % 256) })
        }
        return apng.build()
    }

    @Test func pngColourChunksAreCarriedIntoEveryFrameUnchanged() throws {
        let image = try AnimatedImage(bytes: animation(withChunks: Self.pngChunks))
        let plain = try AnimatedImage(bytes: animation(withChunks: []))
        #expect(image.colorSpace.chunks.map(\.type) == ["cICP", "iCCP", "sRGB", "gAMA", "cHRM"])
        for chunk in image.colorSpace.chunks {
            #expect(chunk.payload == Self.pngChunks.first { $0.0 == chunk.type }!.1, "\(chunk.type)")
        }
        #expect(plain.colorSpace.isEmpty)
        let renderer = FrameRenderer(image: image)
        let plainRenderer = FrameRenderer(image: plain)
        for k in 0..<image.frameCount {
            let canvas = try renderer.render(k)
            #expect(canvas == (try plainRenderer.render(k)), "colour chunks change no pixel (frame \(k))")
            let png = try PNGEncoder().encode(canvas, colorSpace: image.colorSpace)
            let inspected = try PNGInspector(png)
            #expect(inspected.everyCRCMatches)
            // After IHDR, before PLTE and the image data.
            #expect(Array(inspected.chunkTypes.prefix(6)) == ["IHDR", "cICP", "iCCP", "sRGB", "gAMA", "cHRM"])
            #expect(inspected.chunkTypes.dropFirst(6).allSatisfy { ["PLTE", "tRNS", "IDAT", "IEND"].contains($0) })
            for chunk in image.colorSpace.chunks {
                #expect(inspected.chunks.first { $0.type == chunk.type }?.payload == chunk.payload)
            }
            #expect(try inspected.rgba() == canvas.pixels)
            // The frame reader (which resumes decoders from cached PNGs) converts nothing either.
            #expect(try APNGFrameDecoder.decodeRGBA(png, width: 5, height: 4) == canvas.pixels)
        }
    }

    @Test func palettedFramesCarryThemBeforePLTE() throws {
        let palette: [UInt8] = (0..<16 * 3).map { UInt8($0 * 5) }
        let writer = PNGSampleWriter(colorType: 3, bitDepth: 4, interlaced: false)
        var apng = LayoutAPNG(writer: writer, width: 4, height: 4, palette: palette)
        apng.extraChunks = [("gAMA", [0, 1, 0x86, 0xA0])]
        apng.frames = [
            .init(width: 4, height: 4, samples: (0..<16).map { $0 % 16 }),
            .init(width: 4, height: 4, samples: (0..<16).map { ($0 * 3) % 16 }),
        ]
        let image = try AnimatedImage(bytes: apng.build())
        let png = try PNGEncoder().encode(FrameRenderer(image: image).render(1), colorSpace: image.colorSpace)
        #expect(try PNGInspector(png).chunkTypes == ["IHDR", "gAMA", "PLTE", "IDAT", "IEND"])
    }

    @Test func colourChunksAfterTheImageDataAreNotColourInformation() throws {
        var bytes = animation(withChunks: [])
        // gAMA after the frames (before IEND) is too late to apply, for a browser too.
        let iend = bytes.count - 12
        bytes.insert(contentsOf: APNGBuilder(width: 1, height: 1).chunk("gAMA", [0, 1, 0x86, 0xA0]), at: iend)
        #expect(try AnimatedImage(bytes: bytes).colorSpace.isEmpty)
    }

    /// The ICCP payload of a WebP file, found by walking its RIFF chunks.
    static func webpProfile(_ bytes: [UInt8]) -> [UInt8]? {
        var offset = 12
        while offset + 8 <= bytes.count {
            let size =
                Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            if bytes[offset..<offset + 4].elementsEqual("ICCP".utf8) {
                return Array(bytes[offset + 8..<min(bytes.count, offset + 8 + size)])
            }
            offset += 8 + size + (size & 1)
        }
        return nil
    }

    /// A still WebP's profile comes out as iCCP, byte for byte once inflated.
    @Test func aStillWebPProfileBecomesAnICCPChunk() throws {
        let directory = try ExternalTool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let canvas = EncoderRoundTripTests.sceneFrames(count: 1, alpha: true)[0]
        let png = directory.appendingPathComponent("still.png").path
        let webp = directory.appendingPathComponent("still.webp").path
        let icc = directory.appendingPathComponent("profile.icc").path
        let tagged = directory.appendingPathComponent("tagged.webp").path
        try Data(try PNGEncoder().encode(canvas)).write(to: URL(fileURLWithPath: png))
        try Data(Self.profile).write(to: URL(fileURLWithPath: icc))
        try ExternalTool.run("cwebp", ["-quiet", "-lossless", png, "-o", webp], package: "webp")
        try ExternalTool.run("webpmux", ["-set", "icc", icc, webp, "-o", tagged], package: "webp")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: tagged)))
        #expect(Self.webpProfile(bytes) == Self.profile)
        let image = try AnimatedImage(bytes: bytes)
        #expect(image.colorSpace.chunks.map(\.type) == ["iCCP"])
        let frame = try FrameRenderer(image: image).render(0)
        #expect(frame == canvas)
        let inspected = try PNGInspector(try PNGEncoder().encode(frame, colorSpace: image.colorSpace))
        #expect(inspected.chunkTypes.prefix(2) == ["IHDR", "iCCP"])
        let payload = try #require(inspected.chunks.first { $0.type == "iCCP" }?.payload)
        let nameEnd = try #require(payload.firstIndex(of: 0))
        #expect((1...79).contains(nameEnd))
        #expect(payload[nameEnd + 1] == 0, "compression method 0")
        #expect(Self.inflate(Array(payload[(nameEnd + 2)...]), count: Self.profile.count) == Self.profile)
        #expect(try inspected.rgba() == canvas.pixels)
    }

    /// Chromium does not apply an animated WebP's profile (it clears the ICC flag when the
    /// animation flag is set), so its frames are served without one.
    @Test func anAnimatedWebPProfileIsNotCarried() throws {
        let bytes = try Corpus.bytes("flipbook-cases/webp_anim_iccp.webp")
        #expect(Self.webpProfile(bytes) != nil)
        let image = try AnimatedImage(bytes: bytes)
        #expect(image.frameCount > 1)
        #expect(image.colorSpace.isEmpty)
    }

    @Test(arguments: ["flipbook-cases/apng_iccp.png", "flipbook-cases/apng_gama10.png", "flipbook-cases/apng_chrm_p3.png"])
    func corpusColourChunksReachTheServedFrames(_ path: String) throws {
        let bytes = try Corpus.bytes(path)
        let source = try PNGInspector(bytes)
        let firstData = source.chunkTypes.firstIndex(of: "IDAT")!
        let colour = source.chunks[..<firstData].filter { ColorSpaceChunks.pngTypes.contains($0.type) }
        #expect(!colour.isEmpty)
        let image = try AnimatedImage(bytes: bytes)
        let served = try PNGInspector(
            try PNGEncoder().encode(FrameRenderer(image: image).render(0), colorSpace: image.colorSpace))
        for chunk in colour {
            #expect(served.chunks.first { $0.type == chunk.type }?.payload == chunk.payload, "\(path) \(chunk.type)")
        }
    }

    @Test(arguments: ["wuffs/muybridge.gif", "image-rs-image/images/png/apng/ball.png", "pillow/webp/iss634.webp"])
    func imagesWithoutColourInformationGetNone(_ path: String) throws {
        let image = try AnimatedImage(bytes: try Corpus.bytes(path))
        #expect(image.colorSpace.isEmpty)
        let types = try PNGInspector(try PNGEncoder().encode(FrameRenderer(image: image).render(0), colorSpace: image.colorSpace))
            .chunkTypes
        #expect(types.allSatisfy { ["IHDR", "PLTE", "tRNS", "IDAT", "IEND"].contains($0) }, "\(types)")
    }
}
