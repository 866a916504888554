import FlipbookTestSupport
import Testing

@testable import AnimatedImage

/// The frames previews and storyboards are made of: scaled on other threads (and by the caller
/// while it waits), handed back in the order asked, each exactly the rendition frame.
@Suite("Scaled frame stream")
struct ScaledFrameStreamTests {
    static func rendition(_ image: AnimatedImage, width: Int) throws -> FrameRendition {
        try RenditionRequest(width: width, format: .png).rendition(
            canvasWidth: image.canvasWidth, canvasHeight: image.canvasHeight, maxOutputDimension: 4096)
    }

    static func expectedFrames(_ image: AnimatedImage, _ rendition: FrameRendition) throws -> [Canvas] {
        let renderer = FrameRenderer(image: image)
        return try (0..<image.frameCount).map { try RenditionEncoder.pixels(renderer.render($0), as: rendition) }
    }

    /// With frames scaled ahead (the default for these canvases), and with none (as for canvases
    /// above 64 MB: scaled on this thread from the renderer's own canvas).
    @Test(arguments: ["wuffs/muybridge.gif", "pillow/gif/dispose_bgnd.gif", "pillow/webp/iss634.webp"], [nil, 0])
    func everyFrameInOrderIsTheRenditionFrame(_ path: String, ahead: Int?) throws {
        let image = try AnimatedImage(bytes: Corpus.bytes(path))
        let rendition = try Self.rendition(image, width: 37)
        let expected = try Self.expectedFrames(image, rendition)
        let stream = ScaledFrameStream(
            image, rendition: rendition, indices: Array(0..<image.frameCount),
            renderer: FrameRenderer(image: image, checkpointBudget: 0), ahead: ahead, cachedFrame: { _ in nil })
        var seen: [Int] = []
        while let (index, frame) = try stream.next() {
            #expect(frame == expected[index], "\(path) frame \(index)")
            seen.append(index)
        }
        #expect(seen == Array(0..<image.frameCount))
        #expect(try stream.next() == nil)
    }

    /// Frames the cache holds are taken as they are; the list may skip and repeat frames.
    @Test func cachedFramesSkipsAndRepeats() throws {
        let image = try AnimatedImage(bytes: Corpus.bytes("wuffs/muybridge.gif"))
        let rendition = try Self.rendition(image, width: 50)
        let expected = try Self.expectedFrames(image, rendition)
        let marker = Canvas(width: rendition.outputWidth, height: rendition.outputHeight)
        let indices = [0, 2, 2, 3, 7, 8, 8, 9, 14]
        let stream = ScaledFrameStream(
            image, rendition: rendition, indices: indices, renderer: FrameRenderer(image: image, checkpointBudget: 0),
            cachedFrame: { $0 == 3 || $0 == 8 ? marker : nil })
        var seen: [Int] = []
        while let (index, frame) = try stream.next() {
            #expect(frame == (index == 3 || index == 8 ? marker : expected[index]), "frame \(index)")
            seen.append(index)
        }
        #expect(seen == indices)
    }

    /// A frame that does not render: the frames before it come back, then its error, then the end.
    @Test func aFrameThatDoesNotRenderEndsTheStreamInItsTurn() throws {
        let bytes = try Corpus.bytes("wuffs/muybridge.gif")
        var checked = 0
        for (_, damaged) in DamagedCopies.of(bytes, count: 80, seed: 5, in: bytes.count / 2..<bytes.count * 5 / 6, length: 48)
        where checked < 3 {
            guard let image = try? AnimatedImage(bytes: damaged, verification: .structural), image.frameCount > 6,
                case .failure = Result(catching: { try FrameRenderer(image: image).render(image.frameCount - 1) })
            else { continue }
            let inLine = FrameRenderer(image: image)
            let failing = (0..<image.frameCount).first { (try? inLine.render($0)) == nil }!
            let rendition = try Self.rendition(image, width: 40)
            let stream = ScaledFrameStream(
                image, rendition: rendition, indices: Array(0..<image.frameCount),
                renderer: FrameRenderer(image: image, checkpointBudget: 0), cachedFrame: { _ in nil })
            for k in 0..<failing { #expect(try stream.next()?.index == k) }
            #expect(throws: AnimatedImageError.self) { try stream.next() }
            #expect(try stream.next() == nil)
            checked += 1
        }
        #expect(checked > 0, "no damage made a frame fail")
    }

    /// Dropped half-way (a build stopped): the frames being scaled are waited for, none is lost
    /// track of, and a new stream on the same renderer goes on.
    @Test func droppedHalfWay() throws {
        let image = try AnimatedImage(bytes: Corpus.bytes("wuffs/muybridge.gif"))
        let rendition = try Self.rendition(image, width: 60)
        let expected = try Self.expectedFrames(image, rendition)
        let renderer = FrameRenderer(image: image, checkpointBudget: 0)
        do {
            let stream = ScaledFrameStream(
                image, rendition: rendition, indices: Array(0..<image.frameCount), renderer: renderer,
                cachedFrame: { _ in nil })
            #expect(try stream.next()?.frame == expected[0])
        }
        let again = ScaledFrameStream(
            image, rendition: rendition, indices: [1, 2], renderer: renderer, cachedFrame: { _ in nil })
        #expect(try again.next()?.frame == expected[1])
        #expect(try again.next()?.frame == expected[2])
    }
}
