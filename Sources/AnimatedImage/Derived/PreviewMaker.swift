/// Makes an image's animated preview: every frame of a rendition (scaled exactly as the frame
/// routes scale it, ``RenditionEncoder/pixels(_:as:)``) in one animated WebP
/// (``AnimatedWebPEncoder``), each frame shown for its effective delay (`delayMs`, so it plays in
/// every browser as the original plays in Chromium), looping `playCount` times. A still image
/// gives a still WebP, the rendition frame's own bytes (with its colour profile).
public enum PreviewMaker {
    /// The preview of `image` in `rendition` (its format is taken to be WebP). `renderer` renders
    /// the frames in order (a fresh one when nil); `afterFrame` is called after each frame (to
    /// stop a build, throw).
    public static func make(
        _ image: AnimatedImage, rendition: FrameRendition, renderer: FrameRenderer? = nil,
        encoder: WebPEncoder = WebPEncoder(), afterFrame: (Int) throws -> Void = { _ in }
    ) throws -> [UInt8] {
        let renderer = renderer ?? FrameRenderer(image: image)
        let quality = rendition.quality
        if image.frameCount == 1 {
            let frame = try RenditionEncoder.pixels(renderer.render(0), as: rendition)
            try afterFrame(0)
            return try encoder.encode(frame, quality: quality, colorSpace: image.colorSpace)
        }
        let animation = try AnimatedWebPEncoder(
            width: rendition.outputWidth, height: rendition.outputHeight, loopCount: image.timeline.playCount,
            quality: quality, lossyMethod: encoder.lossyMethod, losslessLevel: encoder.losslessLevel)
        let delays = image.timeline.delaysMs
        for index in 0..<image.frameCount {
            let frame = try RenditionEncoder.pixels(renderer.render(index), as: rendition)
            try animation.add(frame, durationMs: delays[index])
            try afterFrame(index)
        }
        return try animation.finish()
    }

    /// What making a preview of a `width`×`height` canvas in `rendition` may hold besides the
    /// renderer's canvas and the output: rendering a frame, scaling it, and libwebp's canvases
    /// and buffers (about eight frames of the output's size).
    public static func workingBytes(_ image: AnimatedImage, rendition: FrameRendition) -> Int {
        let output = rendition.outputWidth * rendition.outputHeight * 4
        return image.decodeMemory.coldRenderBytes
            + RenditionEncoder.workingBytes(rendition, width: image.canvasWidth, height: image.canvasHeight)
            + 8 * output
    }
}
