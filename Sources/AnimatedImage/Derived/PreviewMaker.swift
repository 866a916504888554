import Dispatch

/// Makes an image's animated preview: every frame of a rendition (scaled exactly as the frame
/// routes scale it, ``RenditionEncoder/pixels(_:as:)``) in one animated WebP
/// (``AnimatedWebPEncoder``), each frame shown for its effective delay (`delayMs`, so it plays in
/// every browser as the original plays in Chromium), looping `playCount` times. A still image
/// gives a still WebP, the rendition frame's own bytes (with its colour profile).
public enum PreviewMaker {
    /// The lossy previews' encoding: method 5, spatial noise shaping 80 and `minimize_size`
    /// make previews 6–8% smaller than the frame routes' fast settings (method 2), as small as
    /// libvips's and ffmpeg's at the same quality, with no lower a PSNR; they are made once and
    /// kept, so the slower encoding is paid once (BENCHMARKS.md, "Storyboards and animated
    /// previews").
    public static let lossyTuning = LossyTuning(method: 5, spatialNoiseShaping: 80, minimizeSize: true)

    /// Changes whenever the same frames come out as other preview bytes (the encoding above): a
    /// kept preview's name and ETag carry it.
    public static let revision = 2

    /// The preview of `image` in `rendition` (its format is taken to be WebP). `cachedFrame`
    /// gives a frame's rendition pixels when they are at hand already (a frame cache), else nil;
    /// the others are rendered by `renderer`, in order (a fresh one when nil), and scaled.
    /// `afterFrame` is called after each frame (to stop a build, throw).
    public static func make(
        _ image: AnimatedImage, rendition: FrameRendition, renderer: FrameRenderer? = nil,
        encoder: WebPEncoder = WebPEncoder(), cachedFrame: (Int) -> Canvas? = { _ in nil },
        afterFrame: (Int) throws -> Void = { _ in }
    ) throws -> [UInt8] {
        // In order, each frame once: checkpoints would never be used (nor are they budgeted).
        let renderer = renderer ?? FrameRenderer(image: image, checkpointBudget: 0)
        let quality = rendition.quality
        if image.frameCount == 1 {
            let frame = try cachedFrame(0) ?? RenditionEncoder.pixels(renderer.render(0), as: rendition)
            try afterFrame(0)
            return try encoder.encode(frame, quality: quality, colorSpace: image.colorSpace)
        }
        let animation = try AnimatedWebPEncoder(
            width: rendition.outputWidth, height: rendition.outputHeight, loopCount: image.timeline.playCount,
            quality: quality, lossyMethod: encoder.lossyMethod, losslessLevel: encoder.losslessLevel,
            lossyTuning: Self.lossyTuning)
        let delays = image.timeline.delaysMs
        // Frames are rendered in order here, scaled on other threads (each frame on its own:
        // scaling is most of the work) and encoded here in order, at most `ahead` frames apart.
        let ahead = Self.framesAhead(image)
        var pending: [(index: Int, done: DispatchGroup, result: ScaledFrame)] = []
        func encodeFirst() throws {
            let first = pending.removeFirst()
            first.done.wait()
            try animation.add(first.result.value.get(), durationMs: delays[first.index])
            try afterFrame(first.index)
        }
        do {
            try renderAndEncode()
        } catch {
            for frame in pending { frame.done.wait() }  // no work left behind
            throw error
        }
        return try animation.finish()

        func renderAndEncode() throws {
            for index in 0..<image.frameCount {
                let result = ScaledFrame()
                let done = DispatchGroup()
                if let cached = cachedFrame(index) {
                    result.value = .success(cached)
                    pending.append((index, done, result))
                    while pending.count > ahead { try encodeFirst() }
                    continue
                }
                let canvas = try renderer.render(index)
                done.enter()
                DispatchQueue.global().async {
                    result.value = Result { try RenditionEncoder.pixels(canvas, as: rendition) }
                    done.leave()
                }
                pending.append((index, done, result))
                while pending.count > ahead { try encodeFirst() }
            }
            while !pending.isEmpty { try encodeFirst() }
        }
    }

    /// Frames scaled ahead of the encoder: 4, or none (each frame scaled before the next is
    /// rendered) for canvases above 64 MB, so the canvases waiting to be scaled stay a few.
    static func framesAhead(_ image: AnimatedImage) -> Int {
        image.decodeMemory.canvasBytes > 64 << 20 ? 0 : 4
    }

    /// What making a preview of `image` in `rendition` may hold besides the output: the
    /// renderer's canvas and drawing a frame on it (no PNG is encoded), scaling it, libwebp's
    /// canvases and buffers (about eight frames of the output's size), and the frames scaled
    /// ahead of the encoder (a canvas, the scaler's work and the scaled frame each). Measured:
    /// a 7000×7000 GIF's preview at 320 px peaked 399 MiB above the idle service, which had
    /// reserved 614 MiB for it (this and a canvas; BENCHMARKS.md).
    public static func workingBytes(_ image: AnimatedImage, rendition: FrameRendition) -> Int {
        let output = rendition.outputWidth * rendition.outputHeight * 4
        let scaling = RenditionEncoder.workingBytes(rendition, width: image.canvasWidth, height: image.canvasHeight)
        let ahead = framesAhead(image)
        return image.decodeMemory.canvasBytes + image.decodeMemory.frameDataBytes + scaling + 8 * output
            + ahead * (image.decodeMemory.canvasBytes + scaling + output)
    }
}

/// One frame's scaling result, written by the thread that scales it before its group is left
/// and read after the group is waited for.
private final class ScaledFrame: @unchecked Sendable {
    var value: Result<Canvas, any Error> = .failure(CancellationError())
}
