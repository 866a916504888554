/// Makes an image's animated preview: every frame of a rendition (scaled exactly as the frame
/// routes scale it, ``RenditionEncoder/pixels(_:as:)``) in one animated WebP
/// (``AnimatedWebPEncoder``), each frame shown for its effective delay (`delayMs`, so it plays in
/// every browser as the original plays in Chromium), looping `playCount` times. A still image
/// gives a still WebP, the rendition frame's own bytes (with its colour profile).
public enum PreviewMaker {
    /// The lossy previews' encoding: method 5, spatial noise shaping 80 and `minimize_size`
    /// make previews 6–8% smaller than the frame routes' fast settings (method 2), as small as
    /// libvips's and ffmpeg's at the same quality, with no lower a PSNR; they are made once and
    /// kept, so the slower encoding is paid once (BENCHMARKS.md, "Animated previews").
    public static let lossyTuning = LossyTuning(method: 5, spatialNoiseShaping: 80, minimizeSize: true)

    /// Changes whenever the same frames come out as other preview bytes (the encoding above): a
    /// kept preview's name and ETag carry it.
    public static let revision = 4

    /// The preview of `image` in `rendition` (its format is taken to be WebP). `cachedFrame`
    /// gives a frame's rendition pixels when they are at hand already (a frame cache), else nil;
    /// the others are rendered by `renderer`, in order (a fresh one when nil), and scaled on
    /// other threads (``ScaledFrameStream``).
    /// `afterFrame` is called after each frame (to stop a build, throw).
    public static func make(
        _ image: AnimatedImage, rendition: FrameRendition, renderer: FrameRenderer? = nil,
        encoder: WebPEncoder = WebPEncoder(), cachedFrame: @escaping (Int) -> Canvas? = { _ in nil },
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
        return try encode(image, rendition: rendition, renderer: renderer, cachedFrame: cachedFrame, afterFrame: afterFrame) {
            try Self.animationEncoder(image, rendition: rendition, encoder: encoder, first: $0)
        }
    }

    /// Every frame of `image` in `rendition`, in order, each added to the encoder `makeEncoder`
    /// makes from the first frame, for the effective delay (`delaysMs`): the one way every
    /// preview format is fed (the frames scaled on other threads, ``ScaledFrameStream``).
    /// `cachedFrame` and `afterFrame` are as ``make(_:rendition:renderer:encoder:cachedFrame:afterFrame:)``'s.
    public static func encode(
        _ image: AnimatedImage, rendition: FrameRendition, renderer: FrameRenderer,
        cachedFrame: @escaping (Int) -> Canvas? = { _ in nil }, afterFrame: (Int) throws -> Void = { _ in },
        makeEncoder: (_ first: Canvas) throws -> any AnimationEncoding
    ) throws -> [UInt8] {
        var animation: (any AnimationEncoding)?
        let delays = image.timeline.delaysMs
        let frames = ScaledFrameStream(
            image, rendition: rendition, indices: Array(0..<image.frameCount), renderer: renderer,
            cachedFrame: cachedFrame)
        while let (index, frame) = try frames.next() {
            let encoding = try animation ?? makeEncoder(frame)
            animation = encoding
            try encoding.add(frame, durationMs: delays[index])
            try afterFrame(index)
        }
        guard let animation else { throw WebPEncodingError(message: "an animation needs a frame") }
        return try animation.finish()
    }

    /// Whether `image`'s preview in `rendition` is encoded by ``ParallelAnimatedWebPEncoder``
    /// (lossy frames, ``lossyTuning``'s bytes, encoded on every core): lossy frames up to its
    /// ``ParallelAnimatedWebPEncoder/largestFrameBytes``, none of which could be shown longer
    /// than it writes (2^24 ms, libwebp's limit, which libwebp's own encoder works around with
    /// an extra frame). Other previews go through ``AnimatedWebPEncoder``.
    static func encodesInParallel(_ image: AnimatedImage, rendition: FrameRendition) -> Bool {
        rendition.quality != nil && lossyTuning.minimizeSize
            && rendition.outputWidth * rendition.outputHeight * 4 <= ParallelAnimatedWebPEncoder.largestFrameBytes
            && image.timeline.delaysMs.reduce(0, +) < 1 << 24
    }

    /// The encoder of `image`'s preview in `rendition` (``encodesInParallel(_:rendition:)``),
    /// whose first frame is `first`: a lossy preview whose first frame has few colours
    /// (``hasFewColours(_:)``, at most 256: pixel art, a sticker shown at its size — which VP8's lossy coding
    /// smears and WebP's lossless coding keeps, often in fewer bytes) has each sub-frame tried
    /// lossless as well (libwebp's `allow_mixed`).
    static func animationEncoder(
        _ image: AnimatedImage, rendition: FrameRendition, encoder: WebPEncoder, first: Canvas
    ) throws -> any AnimationEncoding {
        let (width, height) = (rendition.outputWidth, rendition.outputHeight)
        let loopCount = image.timeline.playCount
        guard let quality = rendition.quality else {
            return try AnimatedWebPEncoder(
                width: width, height: height, loopCount: loopCount, quality: nil, losslessLevel: encoder.losslessLevel)
        }
        let config = try lossyTuning.configuration(quality: quality)
        let mixed = hasFewColours(first)
        if encodesInParallel(image, rendition: rendition) {
            return try ParallelAnimatedWebPEncoder(
                width: width, height: height, loopCount: loopCount, config: config, allowMixed: mixed)
        }
        return try AnimatedWebPEncoder(
            width: width, height: height, loopCount: loopCount, config: config,
            minimizeSize: lossyTuning.minimizeSize, allowMixed: mixed)
    }

    /// Whether `frame` has at most 256 colours: an exact palette exists (``PaletteQuantizer``,
    /// the test PNG frames use for palette output).
    public static func hasFewColours(_ frame: Canvas) -> Bool {
        PaletteQuantizer.exactPalette(of: frame) != nil
    }

    /// What making a preview of `image` in `rendition` may hold besides the output: the
    /// renderer's canvas and drawing a frame on it (no PNG is encoded), scaling it, the
    /// encoder's frames in flight and libwebp's canvases and buffers
    /// (``ParallelAnimatedWebPEncoder/workingBytes(width:height:)``, or about eight frames of
    /// the output's size for `WebPAnimEncoder`), and the frames scaled
    /// ahead of the encoder (a canvas, the scaler's work and the scaled frame each). Measured:
    /// a 7000×7000 GIF's preview at 320 px peaked 399 MiB above the idle service, which had
    /// reserved 614 MiB for it (this and a canvas; BENCHMARKS.md, "Animated previews", and its history).
    public static func workingBytes(_ image: AnimatedImage, rendition: FrameRendition) -> Int {
        let encoding =
            encodesInParallel(image, rendition: rendition)
            ? ParallelAnimatedWebPEncoder.workingBytes(width: rendition.outputWidth, height: rendition.outputHeight)
            : 8 * rendition.outputWidth * rendition.outputHeight * 4
        return streamingBytes(image, rendition: rendition) + encoding
    }

    /// What feeding an encoder every frame (``encode(_:rendition:renderer:cachedFrame:afterFrame:makeEncoder:)``)
    /// may hold besides the encoder's own memory: the renderer's canvas and drawing a frame on
    /// it, scaling it, and the frames scaled ahead of the encoder.
    public static func streamingBytes(_ image: AnimatedImage, rendition: FrameRendition) -> Int {
        let scaling = RenditionEncoder.workingBytes(rendition, width: image.canvasWidth, height: image.canvasHeight)
        return image.decodeMemory.canvasBytes + image.decodeMemory.frameDataBytes + scaling
            + ScaledFrameStream.aheadBytes(image, rendition: rendition)
    }
}
