import FlipbookTestSupport
import Testing

@testable import AnimatedImage

/// Verifying with a visitor composites as it decodes: each canvas it shows is exactly the
/// frame a renderer draws, and the frames kept (a broken file's truncation) are the same as
/// verifying without one.
@Suite("Verification that composites")
struct CompositingVisitTests {
    @Test(arguments: [
        "pillow/apng/blend_op_over_near_transparent.png", "wuffs/muybridge.gif",
        "image-rs-image-webp/images/animated/random_lossy.webp", "pygif/dispose-restore-previous.gif",
        "image-rs-image/images/gif/anim/mixed-disposal.gif", "pillow/apng/dispose_op_background_region.png",
    ])
    func eachCanvasIsTheRenderedFrame(_ input: String) throws {
        let bytes = try Corpus.bytes(input)
        let structural = try AnimatedImage(bytes: bytes, verification: .structural)
        var shown: [Int: Canvas] = [:]
        let visited = try structural.verifyingFrames { index, canvas in shown[index] = canvas }
        let plain = try structural.verifyingFrames()
        #expect(visited.frameCount == plain.frameCount)
        #expect(shown.keys.sorted() == Array(0..<visited.frameCount))
        let renderer = FrameRenderer(image: plain)
        for k in 0..<plain.frameCount {
            let rendered = try renderer.render(k).pixels
            #expect(shown[k]?.pixels == rendered, "\(input) frame \(k)")
        }
    }
}
