import AnimatedImage
import AnimationEncoding
import FlipbookTestSupport
import Testing

/// The loop count of an AVIF preview: an edit list in each track that a reader following
/// ISO/IEC 23008-12 (as Chromium's does) reads as `playCount − 1` repetitions, or forever; and
/// the file still decodes, frame for frame (the offsets behind the edit lists moved with them).
@Suite("AVIF loop count")
struct AVIFLoopCountTests {
    /// A 3-frame GIF whose NETSCAPE loop field is `loops` (nil: none, so it plays once); with
    /// `transparent`, frame 0 is cleared after it is shown and frame 1 is all transparent.
    static func gif(loops: Int?, transparent: Bool = false) throws -> AnimatedImage {
        var gif = GIFBuilder(width: 8, height: 6)
        gif.loopCount = loops
        gif.frames = (0..<3).map { k in
            var frame = GIFBuilder.Frame(
                rect: (0, 0, 8, 6), indices: [UInt8](repeating: UInt8(k + 1), count: 48), delayCentiseconds: 5 + 3 * k)
            if transparent && k == 0 { frame.disposal = 2 }
            if transparent && k == 1 { frame.transparentIndex = 2 }
            return frame
        }
        return try AnimatedImage(bytes: gif.build())
    }

    @Test(
        arguments: [
            // (NETSCAPE loop field, playCount, repetitions read back; Int.max: forever)
            (0, 0, Int.max), (nil, 1, 0), (1, 2, 1), (4, 5, 4), (65535, 65536, 65535),
        ] as [(Int?, Int, Int)])
    func theEditListCarriesThePlayCount(loops: Int?, playCount: Int, repetitions: Int) throws {
        for transparent in [false, true] {
            let image = try Self.gif(loops: loops, transparent: transparent)
            #expect(image.timeline.playCount == playCount)
            let rendition = try AVIFPreviewTests.rendition(image, width: 8)
            let preview = try AVIFPreviewMaker.make(image, rendition: rendition, settings: AVIFSettings(speed: 9))
            let file = ISOBMFFReader(bytes: preview)
            let tracks = try file.tracks()
            #expect(tracks.count == (transparent ? 2 : 1))
            #expect(try file.repetitions() == Array(repeating: repetitions, count: tracks.count), "\(loops as Any)")
            for track in tracks { #expect(track.sampleDurations == image.timeline.delaysMs.map(UInt64.init)) }
            // libavif still finds every frame and its duration, and the still image (iloc).
            let decoded = try AVIFReadBack(preview)
            #expect(decoded.frames.count == 3 && decoded.hasAlpha == transparent)
            #expect(decoded.durationsMs.map { Int($0.rounded()) } == image.timeline.delaysMs)
            let expected = try RenditionEncoder.pixels(FrameRenderer(image: image).render(0), as: rendition)
            #expect(AVIFReadBack.psnr(decoded.frames[0], expected) > 30)
        }
    }

    /// The same animation with and without a loop count differs only by the edit lists and the
    /// offsets they move: the coded frames are the same bytes.
    @Test func onlyTheHeadersChange() throws {
        let (forever, once) = (try Self.gif(loops: 0), try Self.gif(loops: nil))
        let settings = AVIFSettings(speed: 9)
        let a = try AVIFPreviewMaker.make(forever, rendition: AVIFPreviewTests.rendition(forever, width: 8), settings: settings)
        let b = try AVIFPreviewMaker.make(once, rendition: AVIFPreviewTests.rendition(once, width: 8), settings: settings)
        #expect(a.count == b.count)
        let mdat = Array("mdat".utf8)
        let at = try #require(a.indices.dropLast(4).first { Array(a[$0..<$0 + 4]) == mdat })
        #expect(a[at...] == b[at...], "the same coded frames at the same place")
    }

    /// A still image has no track, so no edit list: libavif's file as it is.
    @Test func aStillAVIFHasNone() throws {
        var gif = GIFBuilder(width: 4, height: 4)
        gif.frames = [GIFBuilder.Frame(rect: (0, 0, 4, 4), indices: [UInt8](repeating: 1, count: 16))]
        let image = try AnimatedImage(bytes: gif.build())
        let still = try AVIFPreviewMaker.make(
            image, rendition: AVIFPreviewTests.rendition(image, width: 4), settings: AVIFSettings(speed: 9))
        #expect(try ISOBMFFReader(bytes: still).tracks().isEmpty)
        #expect(!still.indices.dropLast(4).contains { Array(still[$0..<$0 + 4]) == Array("edts".utf8) })
    }
}
