import AnimatedImage
import FlipbookTestSupport
import Foundation
import Testing

@testable import AnimationEncoding

/// MP4 previews read back by ffprobe and ffmpeg (FFmpeg's own demuxer and H.264 decoder, not
/// Flipbook's code): one video track, `moov` before `mdat`, every frame of the original as one
/// decoded frame presented at its `timestampsMs` for its `delaysMs`, frames close to the
/// rendition, transparency on white, even sides.
@Suite("MP4 previews", .ownThreads)
struct MP4PreviewTests {
    static func rendition(_ image: AnimatedImage, width: Int) throws -> FrameRendition {
        try AVIFPreviewTests.rendition(image, width: width)
    }

    /// `bytes` in a file of the test's scratch directory.
    static func written(_ bytes: [UInt8], _ label: String) throws -> String {
        let path = ScratchDirectory.newPath(label) + ".mp4"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// ffprobe's answer for `path`, as JSON.
    static func probe(_ path: String, _ arguments: [String]) throws -> [String: Any] {
        guard let ffprobe = Tool.path("ffprobe") else {
            throw TestFailure("ffprobe is not installed (Debian package ffmpeg; `make test` installs it)")
        }
        let result = try runProcess(ffprobe, ["-v", "error", "-of", "json"] + arguments + [path])
        guard result.status == 0, let json = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any] else {
            throw TestFailure("ffprobe \(arguments) \(path): \(result.stderr)")
        }
        return json
    }

    /// The top-level boxes of an ISO-BMFF file, in order.
    static func topLevelBoxes(_ bytes: [UInt8]) -> [String] {
        var boxes: [String] = []
        var at = 0
        while at + 8 <= bytes.count {
            var size = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            if size == 1 { size = bytes[at + 8..<at + 16].reduce(0) { $0 << 8 | Int($1) } }
            boxes.append(String(decoding: bytes[at + 4..<at + 8], as: UTF8.self))
            guard size >= 8 else { break }
            at += size
        }
        return boxes
    }

    /// Every corpus animation's MP4, as FFmpeg reads it: a 1/1000 time base, packets at the
    /// delay table's `timestampsMs` lasting its `delaysMs`, and as many decoded frames at those
    /// times — none dropped or doubled, the last lasting its own delay.
    @Test(arguments: AVIFPreviewTests.animations)
    func frameTimesAreTheDelayTable(path: String) throws {
        let image = try AnimatedImage(bytes: Corpus.bytes(path))
        let preview = try MP4PreviewMaker.make(image, rendition: Self.rendition(image, width: 32), settings: H264Settings())
        #expect(Self.topLevelBoxes(preview) == ["ftyp", "moov", "mdat"], "\(path)")
        let file = try Self.written(preview, "mp4-timing")
        let info = try Self.probe(
            file, ["-show_entries", "stream=codec_name,time_base,pix_fmt,nb_frames:packet=pts,duration", "-select_streams", "v"])
        let streams = try #require(info["streams"] as? [[String: Any]])
        #expect(streams.count == 1)
        #expect(streams.first?["codec_name"] as? String == "h264")
        #expect(streams.first?["time_base"] as? String == "1/1000")
        #expect(streams.first?["pix_fmt"] as? String == "yuv420p")
        let packets = try #require(info["packets"] as? [[String: Any]])
        #expect(packets.compactMap { $0["pts"] as? Int } == image.timeline.timestampsMs, "\(path)")
        #expect(packets.compactMap { $0["duration"] as? Int } == image.timeline.delaysMs, "\(path)")
        let decoded = try Self.probe(file, ["-show_entries", "frame=pts", "-select_streams", "v"])
        let frames = try #require(decoded["frames"] as? [[String: Any]])
        #expect(frames.compactMap { $0["pts"] as? Int } == image.timeline.timestampsMs, "decoded frames of \(path)")
        let all = try Self.probe(file, ["-show_entries", "format=nb_streams,duration"])
        let format = try #require(all["format"] as? [String: Any])
        #expect(format["nb_streams"] as? Int == 1, "no audio track")
        let total = image.timeline.delaysMs.reduce(0, +)
        #expect(format["duration"] as? String == String(format: "%.6f", Double(total) / 1000), "\(path)")
    }

    /// Decoded by ffmpeg, as RGB (its BT.601 limited-range conversion, which the file is tagged
    /// with), each frame is close to the rendition frame over white: photographic animations
    /// above 29 dB at the default quality (crf 24: the lowest frame measured 29.97 dB); the 1-pixel red/yellow dither of
    /// `dispose_bgnd.gif`'s sprites (transparent around them), whose colour 4:2:0 chroma
    /// averages over 2×2 pixels at any quality, within 21 dB at `quality=90` (as AVIF).
    @Test(arguments: [
        ("pillow/gif/iss634.gif", 53, 29.0), ("pillow/webp/iss634.webp", 53, 29.0), ("pillow/gif/dispose_bgnd.gif", 90, 21.0),
    ])
    func framesDecodeCloseToTheRendition(path: String, quality: Int, minimumDB: Double) throws {
        let image = try AnimatedImage(bytes: Corpus.bytes(path))
        let rendition = MP4PreviewMaker.evenSized(try Self.rendition(image, width: 100))
        let preview = try MP4PreviewMaker.make(image, rendition: rendition, settings: H264Settings(quality: quality))
        let frames = try Self.decoded(preview, width: rendition.outputWidth, height: rendition.outputHeight)
        #expect(frames.count == image.frameCount)
        let renderer = FrameRenderer(image: image)
        for k in 0..<min(frames.count, image.frameCount) {
            let expected = OpaqueBackground.white.flattened(try RenditionEncoder.pixels(renderer.render(k), as: rendition).pixels)
            let psnr = Self.psnr(frames[k], expected)
            #expect(psnr > minimumDB, "frame \(k) of \(path): \(psnr) dB")
        }
    }

    /// The frames of `mp4` decoded by ffmpeg to RGBA.
    static func decoded(_ mp4: [UInt8], width: Int, height: Int) throws -> [[UInt8]] {
        guard let ffmpeg = Tool.path("ffmpeg") else { throw TestFailure("ffmpeg is not installed (Debian package ffmpeg)") }
        let file = try written(mp4, "mp4-decode")
        let result = try runProcess(
            ffmpeg, ["-v", "error", "-i", file, "-f", "rawvideo", "-pix_fmt", "rgba", "-fps_mode", "passthrough", "-"])
        guard result.status == 0 else { throw TestFailure("ffmpeg: \(result.stderr)") }
        let size = width * height * 4
        return stride(from: 0, to: result.stdout.count - size + 1, by: size).map { Array(result.stdout[$0..<$0 + size]) }
    }

    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        var sum = 0.0
        var count = 0
        for i in 0..<min(a.count, b.count) where i % 4 != 3 {
            let d = Double(a[i]) - Double(b[i])
            sum += d * d
            count += 1
        }
        return sum == 0 ? 99 : 10 * log10(255 * 255 / (sum / Double(count)))
    }

    /// A frame that clears part of the canvas: the cleared pixels are the background in the video
    /// (white by default), composited in RGB before 4:2:0; the opaque pixels are as they were.
    @Test(
        arguments: [
            (H264Settings(), (255, 255, 255)), (H264Settings(background: OpaqueBackground(hex: "000")!), (0, 0, 0)),
            (H264Settings(background: OpaqueBackground(hex: "20C040")!), (0x20, 0xc0, 0x40)),
        ] as [(H264Settings, (Int, Int, Int))])
    func transparencyIsCompositedOntoTheBackground(settings: H264Settings, colour: (Int, Int, Int)) throws {
        var gif = GIFBuilder(width: 16, height: 16)
        gif.frames = [
            GIFBuilder.Frame(rect: (0, 0, 16, 16), indices: [UInt8](repeating: 3, count: 256), delayCentiseconds: 7, disposal: 2),
            GIFBuilder.Frame(rect: (0, 0, 8, 8), indices: [UInt8](repeating: 2, count: 64), delayCentiseconds: 13),
        ]
        let image = try AnimatedImage(bytes: gif.build())
        let preview = try MP4PreviewMaker.make(image, rendition: Self.rendition(image, width: 16), settings: settings)
        let frames = try Self.decoded(preview, width: 16, height: 16)
        #expect(frames.count == 2)
        let corner = (15 * 16 + 15) * 4
        #expect(frames[0][corner] < 40 && frames[0][corner + 2] > 200, "frame 0 is blue: \(frames[0][corner..<corner + 3])")
        let cleared = frames[1][corner..<corner + 3].map(Int.init)
        #expect(zip(cleared, [colour.0, colour.1, colour.2]).allSatisfy { abs($0 - $1) <= 6 }, "the cleared corner: \(cleared)")
        #expect(frames[1][0] > 200 && frames[1][1] < 50, "the red square")
    }

    @Test(
        arguments: [
            // (scaled, crop, → scaled, crop)
            ((320, 180), nil, (320, 180), nil),
            ((321, 181), nil, (320, 180), nil),
            ((1, 1), nil, (2, 2), nil),
            ((3, 2), nil, (2, 2), nil),
            (
                (400, 300), PixelRect(x: 40, y: 0, width: 321, height: 300), (400, 300),
                PixelRect(x: 40, y: 0, width: 320, height: 300)
            ),
            ((400, 1), PixelRect(x: 0, y: 0, width: 399, height: 1), (400, 2), PixelRect(x: 0, y: 0, width: 398, height: 2)),
        ] as [((Int, Int), PixelRect?, (Int, Int), PixelRect?)])
    func oddSidesBecomeEven(scaled: (Int, Int), crop: PixelRect?, even: (Int, Int), evenCrop: PixelRect?) {
        let rendition = FrameRendition(scaledWidth: scaled.0, scaledHeight: scaled.1, crop: crop, format: .webp, quality: 80)
        let made = MP4PreviewMaker.evenSized(rendition)
        #expect(made.scaledWidth == even.0 && made.scaledHeight == even.1 && made.crop == evenCrop)
        #expect(made.outputWidth % 2 == 0 && made.outputHeight % 2 == 0 && made.quality == 80)
        #expect(MP4PreviewMaker.evenSized(made) == made)
    }

    /// Frame threads are a constant, so the bytes are the same on every machine; and the same
    /// frames always give the same bytes.
    @Test func theSameFramesGiveTheSameBytes() throws {
        let image = try AnimatedImage(bytes: Corpus.bytes("pillow/gif/iss634.gif"))
        let rendition = try Self.rendition(image, width: 64)
        let first = try MP4PreviewMaker.make(image, rendition: rendition, settings: H264Settings())
        #expect(try MP4PreviewMaker.make(image, rendition: rendition, settings: H264Settings()) == first)
        #expect(H264Settings().threads == H264Settings.defaultThreads)
    }

    @Test func encoderRefusals() throws {
        #expect(throws: H264EncodingError.self) { try H264SequenceEncoder(width: 5, height: 4, settings: H264Settings()) }
        #expect(throws: H264EncodingError.self) { try H264SequenceEncoder(width: 0, height: 4, settings: H264Settings()) }
        let encoder = try H264SequenceEncoder(width: 4, height: 4, settings: H264Settings())
        #expect(throws: H264EncodingError.self) { try encoder.add(Canvas(width: 6, height: 4), durationMs: 10) }
        #expect(throws: H264EncodingError.self) {
            try H264SequenceEncoder(width: 4, height: 4, settings: H264Settings()).finish()
        }
    }

    /// x264's reservation grows with the frames its look-ahead can hold, up to 60, and no further.
    @Test func theEncodersReservationFollowsTheLookAhead() {
        let (few, sixty, many) = (
            H264SequenceEncoder.workingBytes(width: 320, height: 180, frameCount: 4),
            H264SequenceEncoder.workingBytes(width: 320, height: 180, frameCount: 60),
            H264SequenceEncoder.workingBytes(width: 320, height: 180, frameCount: 300)
        )
        #expect(few < sixty && sixty == many)
        let padded = (320 + 64) * (180 + 64) * 3 / 2
        #expect(many - few == 56 * 2 * padded)
        #expect(many >= 96 * 2 * padded)
    }

    @Test func qualityMapsToX264RateFactors() {
        #expect(H264Settings().rateFactor == 24)
        #expect(H264Settings(quality: 55).rateFactor == 23)
        #expect(H264Settings(quality: 100).rateFactor == 0)
        #expect(H264Settings(quality: 1).rateFactor == 50)
    }

    /// Looks an executable up on `PATH`.
    enum Tool {
        static func path(_ name: String) -> String? {
            for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
                let candidate = "\(directory)/\(name)"
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
            return nil
        }
    }
}
