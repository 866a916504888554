import AnimatedImage
import FlipbookTestSupport
import Foundation
import Testing

@testable import AnimationEncoding

/// WebM previews read back by ffprobe and ffmpeg (FFmpeg's own Matroska demuxer, its VP9
/// decoder and libvpx's, not Flipbook's code): one VP9 track in 1 ms units, every frame of the
/// original as one block at its `timestampsMs` lasting its `delaysMs`, an alpha stream exactly
/// when a frame has transparency (lossless: the alpha decodes to the composited alpha), frames
/// close to the rendition.
@Suite("WebM previews", .ownThreads)
struct WebMPreviewTests {
    static func written(_ bytes: [UInt8], _ label: String) throws -> String {
        let path = ScratchDirectory.newPath(label) + ".webm"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Every corpus animation's WebM, as FFmpeg reads it: a 1/1000 time base, packets at the
    /// delay table's `timestampsMs` lasting its `delaysMs`, as many decoded frames at those
    /// times, the file lasting the whole table; `alpha_mode` 1 exactly when a frame has
    /// transparency.
    @Test(arguments: AVIFPreviewTests.animations)
    func frameTimesAreTheDelayTable(path: String) throws {
        let image = try AnimatedImage(bytes: Corpus.bytes(path))
        let rendition = try AVIFPreviewTests.rendition(image, width: 32)
        let preview = try WebMPreviewMaker.make(image, rendition: rendition, settings: VP9Settings())
        let file = try Self.written(preview, "webm-timing")
        let info = try MP4PreviewTests.probe(
            file,
            [
                "-show_entries", "stream=codec_name,time_base,width,height:stream_tags=alpha_mode:packet=pts,duration",
                "-select_streams", "v",
            ])
        let streams = try #require(info["streams"] as? [[String: Any]])
        #expect(streams.count == 1)
        #expect(streams.first?["codec_name"] as? String == "vp9")
        #expect(streams.first?["time_base"] as? String == "1/1000")
        #expect(streams.first?["width"] as? Int == rendition.outputWidth)
        let packets = try #require(info["packets"] as? [[String: Any]])
        #expect(packets.compactMap { $0["pts"] as? Int } == image.timeline.timestampsMs, "\(path)")
        #expect(packets.compactMap { $0["duration"] as? Int } == image.timeline.delaysMs, "\(path)")
        let decoded = try MP4PreviewTests.probe(file, ["-show_entries", "frame=pts", "-select_streams", "v"])
        let frames = try #require(decoded["frames"] as? [[String: Any]])
        #expect(frames.compactMap { $0["pts"] as? Int } == image.timeline.timestampsMs, "decoded frames of \(path)")
        let all = try MP4PreviewTests.probe(file, ["-show_entries", "format=nb_streams,duration"])
        let format = try #require(all["format"] as? [String: Any])
        #expect(format["nb_streams"] as? Int == 1)
        let total = image.timeline.delaysMs.reduce(0, +)
        #expect(format["duration"] as? String == String(format: "%.6f", Double(total) / 1000), "\(path)")
        let renderer = FrameRenderer(image: image)
        let transparent = try (0..<image.frameCount).contains { k in
            try !RenditionEncoder.pixels(renderer.render(k), as: rendition).isOpaque
        }
        let tags = streams.first?["tags"] as? [String: Any]
        #expect(
            (tags?["alpha_mode"] as? String == "1") == transparent, "\(path): alpha \(tags ?? [:]), transparency \(transparent)")
    }

    /// Decoded by libvpx through ffmpeg (which reads the alpha stream), each frame is close to
    /// the rendition (PSNR of what is seen, premultiplied, as AVIF's: photographic frames above
    /// 29 dB at the default quality; the 1-pixel red/yellow dither of `dispose_bgnd.gif`'s
    /// sprites within 21 dB at `quality=90`, as AVIF and MP4), and its alpha is the rendition's
    /// exactly.
    @Test(arguments: [
        ("pillow/gif/iss634.gif", 44, 29.0, false), ("pillow/gif/dispose_bgnd.gif", 90, 21.0, true),
    ])
    func framesDecodeCloseToTheRendition(path: String, quality: Int, minimumDB: Double, alpha: Bool) throws {
        let image = try AnimatedImage(bytes: Corpus.bytes(path))
        let rendition = try AVIFPreviewTests.rendition(image, width: 100)
        let preview = try WebMPreviewMaker.make(image, rendition: rendition, settings: VP9Settings(quality: quality))
        let frames = try Self.decoded(preview, width: rendition.outputWidth, height: rendition.outputHeight)
        #expect(frames.count == image.frameCount)
        let renderer = FrameRenderer(image: image)
        for k in 0..<min(frames.count, image.frameCount) {
            let expected = try RenditionEncoder.pixels(renderer.render(k), as: rendition)
            let alphaOf = { (pixels: [UInt8]) in stride(from: 3, to: pixels.count, by: 4).map { pixels[$0] } }
            #expect(alphaOf(frames[k]) == alphaOf(expected.pixels), "alpha of frame \(k) of \(path)")
            let psnr = AVIFReadBack.psnr(Canvas(width: expected.width, height: expected.height, pixels: frames[k]), expected)
            #expect(psnr > minimumDB, "frame \(k) of \(path): \(psnr) dB")
        }
        #expect(try Self.hasAlphaStream(preview) == alpha)
    }

    /// An animation whose first frame is opaque and whose second clears part of the canvas: the
    /// encoder started without alpha starts again with it, and keeps every frame.
    @Test func transparencyAfterTheFirstFrameGetsAnAlphaStream() throws {
        var gif = GIFBuilder(width: 8, height: 8)
        gif.frames = [
            GIFBuilder.Frame(rect: (0, 0, 8, 8), indices: [UInt8](repeating: 2, count: 64), delayCentiseconds: 7, disposal: 2),
            GIFBuilder.Frame(rect: (0, 0, 4, 4), indices: [UInt8](repeating: 3, count: 16), delayCentiseconds: 13),
        ]
        let image = try AnimatedImage(bytes: gif.build())
        let preview = try WebMPreviewMaker.make(
            image, rendition: AVIFPreviewTests.rendition(image, width: 8), settings: VP9Settings())
        #expect(try Self.hasAlphaStream(preview))
        let frames = try Self.decoded(preview, width: 8, height: 8)
        #expect(frames.count == 2)
        #expect(frames.first?[3] == 255)
        #expect(frames.last?[(7 * 8 + 7) * 4 + 3] == 0, "the cleared corner is transparent")
    }

    /// A delay longer than a block's 16-bit offset from its cluster starts a new cluster: the
    /// times stay exact.
    @Test func longDelaysStayExact() throws {
        let encoder = try VP9SequenceEncoder(width: 16, height: 8, alpha: false, settings: VP9Settings())
        var frame = Canvas(width: 16, height: 8)
        for index in 0..<frame.pixels.count where index % 4 == 3 { frame.pixels[index] = 255 }
        for delay in [40_000, 33_000, 10] { try encoder.add(frame, durationMs: delay) }
        let file = try Self.written(encoder.finish(), "webm-long")
        let info = try MP4PreviewTests.probe(file, ["-show_entries", "packet=pts,duration", "-select_streams", "v"])
        let packets = try #require(info["packets"] as? [[String: Any]])
        #expect(packets.compactMap { $0["pts"] as? Int } == [0, 40_000, 73_000])
        #expect(packets.compactMap { $0["duration"] as? Int } == [40_000, 33_000, 10])
    }

    /// Threads are a constant, so the bytes are the same on every machine; and the same frames
    /// always give the same bytes.
    @Test func theSameFramesGiveTheSameBytes() throws {
        let image = try AnimatedImage(bytes: Corpus.bytes("pillow/gif/dispose_bgnd.gif"))
        let rendition = try AVIFPreviewTests.rendition(image, width: 64)
        let first = try WebMPreviewMaker.make(image, rendition: rendition, settings: VP9Settings())
        #expect(try WebMPreviewMaker.make(image, rendition: rendition, settings: VP9Settings()) == first)
        #expect(VP9Settings().threads == VP9Settings.defaultThreads)
    }

    @Test func encoderRefusals() throws {
        #expect(throws: VP9EncodingError.self) {
            try VP9SequenceEncoder(width: 0, height: 4, alpha: false, settings: VP9Settings())
        }
        let encoder = try VP9SequenceEncoder(width: 4, height: 4, alpha: false, settings: VP9Settings())
        #expect(throws: VP9EncodingError.self) { try encoder.add(Canvas(width: 6, height: 4), durationMs: 10) }
        #expect(throws: VP9EncodingError.alphaNeeded) { try encoder.add(Canvas(width: 4, height: 4), durationMs: 10) }
        #expect(throws: VP9EncodingError.self) {
            try VP9SequenceEncoder(width: 4, height: 4, alpha: true, settings: VP9Settings()).finish()
        }
    }

    /// Whether ffprobe sees the track's `AlphaMode` 1.
    static func hasAlphaStream(_ webm: [UInt8]) throws -> Bool {
        let info = try MP4PreviewTests.probe(
            written(webm, "webm-alpha"), ["-show_entries", "stream_tags=alpha_mode", "-select_streams", "v"])
        let streams = info["streams"] as? [[String: Any]]
        return (streams?.first?["tags"] as? [String: Any])?["alpha_mode"] as? String == "1"
    }

    /// The frames of `webm` decoded by libvpx in ffmpeg (FFmpeg's own VP9 decoder ignores the
    /// alpha stream) to RGBA.
    static func decoded(_ webm: [UInt8], width: Int, height: Int) throws -> [[UInt8]] {
        guard let ffmpeg = MP4PreviewTests.Tool.path("ffmpeg") else {
            throw TestFailure("ffmpeg is not installed (Debian package ffmpeg)")
        }
        let file = try written(webm, "webm-decode")
        let result = try runProcess(
            ffmpeg,
            [
                "-v", "error", "-c:v", "libvpx-vp9", "-i", file, "-f", "rawvideo", "-pix_fmt", "rgba", "-fps_mode", "passthrough",
                "-",
            ])
        guard result.status == 0 else { throw TestFailure("ffmpeg: \(result.stderr)") }
        let size = width * height * 4
        return stride(from: 0, to: result.stdout.count - size + 1, by: size).map { Array(result.stdout[$0..<$0 + size]) }
    }
}
