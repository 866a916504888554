import AnimatedImage
import AnimationEncoding
import FlipbookTestSupport
import Testing

/// AVIF previews read back two ways — the file's own sample tables (``ISOBMFFReader``: what a
/// player is told) and libavif's decoder (the frames) — have every frame of the original, each
/// lasting its effective delay exactly, an alpha track exactly when a frame has transparency,
/// and frames close to the rendition frames.
@Suite("AVIF previews")
struct AVIFPreviewTests {
    /// Every animation of the corpus that decodes, with two frames or more.
    static let animations: [String] = Corpus.entries.filter { !$0.negative }.map(\.path).filter { path in
        guard let bytes = try? Corpus.bytes(path), let image = try? AnimatedImage(bytes: bytes) else { return false }
        return image.frameCount > 1
    }

    static func rendition(_ image: AnimatedImage, width: Int) throws -> FrameRendition {
        try RenditionRequest(width: width, format: .webp).rendition(
            canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: 4096)
    }

    @Test func theCorpusHasAnimations() {
        #expect(Self.animations.count >= 20, "\(Self.animations.count) animations found in the corpus")
    }

    /// The sample table of every corpus animation's preview: a 1000 Hz track whose samples last
    /// the delay table's `delaysMs`, one per frame, in the alpha track as well when there is one.
    @Test(arguments: animations)
    func everyFrameLastsItsEffectiveDelay(path: String) throws {
        let image = try AnimatedImage(bytes: Corpus.bytes(path))
        let preview = try AVIFPreviewMaker.make(
            image, rendition: Self.rendition(image, width: 32), settings: AVIFSettings(speed: 9))
        let file = ISOBMFFReader(bytes: preview)
        #expect(try file.brands().contains("avis"))
        let tracks = try file.tracks()
        #expect(tracks.count == 1 || tracks.count == 2)
        for track in tracks {
            #expect(track.timescale == 1000)
            #expect(track.sampleDurations == image.timeline.delaysMs.map(UInt64.init), "\(track.handler) track of \(path)")
        }
    }

    /// Frames as libavif decodes them, against the rendition frames (PSNR of what is seen:
    /// premultiplied): photographic animations at the default quality within 30 dB; the
    /// 1-pixel red/yellow dither of `dispose_bgnd.gif`'s sprites, whose colour 4:2:0 chroma
    /// averages over 2×2 pixels at any quality, within 21 dB at `quality=90` (measured 22–27).
    /// The alpha plane is exact.
    @Test(arguments: [
        ("pillow/gif/iss634.gif", 44, 30.0), ("pillow/webp/iss634.webp", 44, 30.0), ("pillow/gif/dispose_bgnd.gif", 90, 21.0),
    ])
    func framesDecodeCloseToTheRendition(path: String, quality: Int, minimumDB: Double) throws {
        let image = try AnimatedImage(bytes: Corpus.bytes(path))
        let rendition = try Self.rendition(image, width: 100)
        let preview = try AVIFPreviewMaker.make(image, rendition: rendition, settings: AVIFSettings(quality: quality))
        let readBack = try AVIFReadBack(preview)
        #expect(readBack.frames.count == image.frameCount)
        #expect(readBack.durationsMs.map { Int($0.rounded()) } == image.timeline.delaysMs)
        let renderer = FrameRenderer(image: image)
        var transparent = false
        for k in 0..<image.frameCount {
            let expected = try RenditionEncoder.pixels(renderer.render(k), as: rendition)
            transparent = transparent || !expected.isOpaque
            let psnr = AVIFReadBack.psnr(readBack.frames[k], expected)
            #expect(psnr > minimumDB, "frame \(k) of \(path): \(psnr) dB")
            if readBack.hasAlpha {
                // The alpha plane is lossless: transparency exactly as composited.
                let alphaA = stride(from: 3, to: expected.pixels.count, by: 4).map { readBack.frames[k].pixels[$0] }
                let alphaB = stride(from: 3, to: expected.pixels.count, by: 4).map { expected.pixels[$0] }
                #expect(alphaA == alphaB, "alpha of frame \(k) of \(path)")
            }
        }
        #expect(readBack.hasAlpha == transparent, "\(path): alpha plane \(readBack.hasAlpha), transparency \(transparent)")
        #expect(try ISOBMFFReader(bytes: preview).tracks().count == (transparent ? 2 : 1))
    }

    /// An animation whose first frame is opaque and whose second clears part of the canvas: the
    /// encoder started without alpha starts again with it, and keeps every frame.
    @Test func transparencyAfterTheFirstFrameGetsAnAlphaPlane() throws {
        var gif = GIFBuilder(width: 8, height: 8)
        gif.frames = [
            GIFBuilder.Frame(rect: (0, 0, 8, 8), indices: [UInt8](repeating: 2, count: 64), delayCentiseconds: 7, disposal: 2),
            GIFBuilder.Frame(rect: (0, 0, 4, 4), indices: [UInt8](repeating: 3, count: 16), delayCentiseconds: 13),
            GIFBuilder.Frame(rect: (4, 4, 4, 4), indices: [UInt8](repeating: 1, count: 16), delayCentiseconds: 1),
        ]
        let image = try AnimatedImage(bytes: gif.build())
        let rendition = try Self.rendition(image, width: 8)
        let preview = try AVIFPreviewMaker.make(image, rendition: rendition, settings: AVIFSettings())
        let readBack = try AVIFReadBack(preview)
        #expect(readBack.hasAlpha)
        #expect(readBack.frames.count == 3)
        #expect(readBack.frames[0].pixels[3] == 255)
        #expect(readBack.frames[1].pixels[(7 * 8 + 7) * 4 + 3] == 0, "the cleared corner is transparent")
        let tracks = try ISOBMFFReader(bytes: preview).tracks()
        #expect(tracks.count == 2)
        #expect(tracks.allSatisfy { $0.sampleDurations == [70, 130, 100] })
    }

    /// libavif writes the clock into the movie headers; the encoder clears it: same frames,
    /// same bytes (a second apart, so a clock in seconds would differ) — and the same for any
    /// number of cores: asked for one thread, libaom gets 2 (with one, libavif leaves its row
    /// multithreading off, which codes 96-px frames differently; at 24 px nothing differed).
    @Test func theSameFramesGiveTheSameBytesOnAnyNumberOfCores() async throws {
        let image = try AnimatedImage(bytes: Corpus.bytes("pillow/gif/iss634.gif"))
        let rendition = try Self.rendition(image, width: 96)
        let first = try AVIFPreviewMaker.make(image, rendition: rendition, settings: AVIFSettings(threads: 4))
        try await Task.sleep(for: .milliseconds(1100))
        #expect(try AVIFPreviewMaker.make(image, rendition: rendition, settings: AVIFSettings(threads: 1)) == first)
        #expect(try AVIFPreviewMaker.make(image, rendition: rendition, settings: AVIFSettings(threads: 2)) == first)
        #expect(AVIFSettings(threads: 1).threads == AVIFSettings.minimumThreads)
    }

    @Test func anOpaqueEncoderRefusesATransparentFrame() throws {
        let encoder = try AVIFSequenceEncoder(width: 4, height: 4, alpha: false, settings: AVIFSettings())
        let frame = Canvas(width: 4, height: 4)  // transparent black
        #expect(throws: AVIFEncodingError.alphaNeeded) { try encoder.add(frame, durationMs: 100) }
    }

    @Test func aStillImageGivesAStillAVIF() throws {
        let image = try AnimatedImage(bytes: Corpus.bytes("pillow/webp/transparent.webp"))
        #expect(image.frameCount == 1)
        let preview = try AVIFPreviewMaker.make(image, rendition: Self.rendition(image, width: 40), settings: AVIFSettings())
        let file = ISOBMFFReader(bytes: preview)
        #expect(try file.brands().contains("avif"))
        #expect(try !file.brands().contains("avis"))
        #expect(try file.tracks().isEmpty)
        let readBack = try AVIFReadBack(preview)
        #expect(readBack.frames.count == 1)
        #expect(readBack.hasAlpha)
    }

    @Test func framesOfAnotherSizeAreRefused() throws {
        let encoder = try AVIFSequenceEncoder(width: 4, height: 4, alpha: true, settings: AVIFSettings())
        #expect(throws: AVIFEncodingError.self) { try encoder.add(Canvas(width: 5, height: 4), durationMs: 10) }
        #expect(throws: AVIFEncodingError.self) {
            try AVIFSequenceEncoder(width: 0, height: 4, alpha: true, settings: AVIFSettings())
        }
    }

    @Test func qualityMapsToLibaomQuantizerLevels() {
        #expect(AVIFSettings().quantizerLevel == 35)
        #expect(AVIFSettings(quality: 100).quantizerLevel == 0)
        #expect(AVIFSettings(quality: 1).quantizerLevel == 62)
        #expect(AVIFSettings(quality: 0).quality == 1)
    }
}

/// AVIF frames (`format=avif` on the frame routes): ``RenditionEncoder`` makes a still AVIF that
/// libavif decodes back close to the rendition frame at the default quality (44; the
/// photographic frame measured 28.95 dB, the dithered sprites lower: 4:2:0), with alpha exactly
/// when the frame has transparency, and more bytes at a higher quality.
@Suite("AVIF frames")
struct AVIFFrameTests {
    @Test(arguments: [("pillow/gif/iss634.gif", 28.0), ("pillow/gif/dispose_bgnd.gif", 20.0)])
    func aFrameDecodesCloseToTheRendition(path: String, minimumDB: Double) throws {
        let image = try AnimatedImage(bytes: Corpus.bytes(path))
        let rendition = FrameRendition(scaledWidth: 100, scaledHeight: 100, format: .avif, quality: 44)
        let renderer = FrameRenderer(image: image)
        let canvas = try renderer.render(image.frameCount / 2)
        let bytes = try RenditionEncoder().encode(canvas, as: rendition, colorSpace: image.colorSpace)
        #expect(try ISOBMFFReader(bytes: bytes).brands().contains("avif"))
        let decoded = try AVIFReadBack(bytes)
        #expect(decoded.frames.count == 1)
        let expected = try RenditionEncoder.pixels(canvas, as: rendition)
        #expect(decoded.hasAlpha == !expected.isOpaque)
        let psnr = AVIFReadBack.psnr(decoded.frames[0], expected)
        #expect(psnr > minimumDB, "\(path): \(psnr) dB")
        var better = rendition
        better.quality = 90
        #expect(try RenditionEncoder().encode(canvas, as: better, colorSpace: image.colorSpace).count > bytes.count)
    }
}
