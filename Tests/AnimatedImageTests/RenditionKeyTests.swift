import Testing

@testable import AnimatedImage

/// A rendition's key read back (`FrameRendition(key:)`): every key ``FrameRendition/key`` writes
/// names its rendition again, and nothing else is read as one.
@Suite("Rendition keys")
struct RenditionKeyTests {
    static let renditions: [FrameRendition] = [
        FrameRendition(scaledWidth: 480, scaledHeight: 270, format: .webp, quality: 55),
        FrameRendition(scaledWidth: 320, scaledHeight: 180, format: .png),
        FrameRendition(scaledWidth: 1, scaledHeight: 1, format: .webp),
        FrameRendition(scaledWidth: 9999, scaledHeight: 100, format: .webp, quality: 100),
        FrameRendition(scaledWidth: 7, scaledHeight: 5, format: .webp, quality: 1),
        FrameRendition(
            scaledWidth: 356, scaledHeight: 200, crop: PixelRect(x: 78, y: 0, width: 200, height: 200), format: .webp,
            quality: 80),
        FrameRendition(
            scaledWidth: 400, scaledHeight: 300, crop: PixelRect(x: 0, y: 0, width: 400, height: 300), format: .png),
        FrameRendition(scaledWidth: 320, scaledHeight: 180, format: .avif, quality: 44),
        FrameRendition(
            scaledWidth: 356, scaledHeight: 200, crop: PixelRect(x: 78, y: 0, width: 200, height: 200), format: .avif,
            quality: 100),
    ]

    @Test(arguments: renditions)
    func aKeyNamesItsRendition(_ rendition: FrameRendition) {
        #expect(FrameRendition(key: Substring(rendition.key)) == rendition, "\(rendition.key)")
    }

    /// An AVIF rendition with no quality is encoded at AVIF's default: it is named so (a key that
    /// reads back), and a storyboard's key says the same.
    @Test func anAVIFRenditionWithoutQualityIsNamedByTheDefaultItIsEncodedAt() {
        let unset = FrameRendition(scaledWidth: 320, scaledHeight: 180, format: .avif)
        let given = FrameRendition(
            scaledWidth: 320, scaledHeight: 180, format: .avif, quality: AVIFFrameEncoder.defaultQuality)
        #expect(unset.key == "320x180-avif-q\(AVIFFrameEncoder.defaultQuality)")
        #expect(unset.key == given.key)
        #expect(FrameRendition(key: Substring(unset.key)) == given)
        #expect(
            StoryboardSpec(format: .avif).key(tileHeight: 90)
                == "t160x90-c10-all-avif-q\(AVIFFrameEncoder.defaultQuality)")
    }

    @Test(arguments: [
        "", "full", "480x270", "480x270-", "480x270-jpeg", "480x270-webp", "480x270-webp-q0", "480x270-webp-q101",
        "480x270-webp-q055", "480x270-webp-q+5", "480x270-webp-ll-", "0480x270-png", "0x270-png", "480x0-png",
        "-480x270-png", "480X270-png", "480x270-PNG", "480x270+0+0-0x270-png", "480x270+1+0-480x270-png",
        "480x270+0+1-480x270-png", "480x270+0-480x270-png", "1234567890x1-png", "480x270-png ", " 480x270-png",
        "４８０x270-png", "480x270-avif", "480x270-avif-ll", "480x270-avif-q0", "480x270-avif-q101", "480x270-avif-q044",
    ])
    func anythingElseIsNotAKey(_ text: String) {
        #expect(FrameRendition(key: Substring(text)) == nil, "\(text)")
    }
}
