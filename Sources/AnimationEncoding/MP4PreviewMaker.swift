import AnimatedImage

/// Makes an image's preview as MP4: every frame of a rendition (scaled exactly as the frame
/// routes scale it) as one H.264 sample (``H264SequenceEncoder``), each lasting its effective
/// delay (`delaysMs`, in a 1000 Hz timescale: exactly), `moov` before `mdat`, no audio.
///
/// Two things an MP4 cannot hold change the frames: H.264's 4:2:0 chroma needs even sides, so the
/// rendition is made even first (``evenSized(_:)``); and it has no alpha, so transparency is
/// composited onto white (``H264SequenceEncoder/background``). It has no loop count either
/// (`<video loop>` loops forever; the player plays a finite `playCount` itself).
public enum MP4PreviewMaker {
    /// Changes whenever the same frames come out as other MP4 bytes (encoder settings, muxer):
    /// a kept preview's name and ETag carry it.
    public static let revision = 2

    /// The rendition an MP4 of `rendition` is made in: an odd scaled width or height becomes the
    /// even number below it (the frame is scaled to that size: the whole picture, its aspect
    /// changed by less than a pixel), and a `cover` crop loses its last column or row when its
    /// side is odd. A side of 1 becomes 2.
    public static func evenSized(_ rendition: FrameRendition) -> FrameRendition {
        var even = rendition
        if var crop = rendition.crop {
            if crop.width % 2 == 1 { crop.width = crop.width == 1 ? 2 : crop.width - 1 }
            if crop.height % 2 == 1 { crop.height = crop.height == 1 ? 2 : crop.height - 1 }
            // A side grown from 1 to 2 stays inside the scaled frame (which grows when it is 1).
            even.scaledWidth = max(even.scaledWidth, crop.width)
            even.scaledHeight = max(even.scaledHeight, crop.height)
            crop.x = min(crop.x, even.scaledWidth - crop.width)
            crop.y = min(crop.y, even.scaledHeight - crop.height)
            even.crop = crop
        } else {
            even.scaledWidth = Self.even(rendition.scaledWidth)
            even.scaledHeight = Self.even(rendition.scaledHeight)
        }
        return even
    }

    private static func even(_ side: Int) -> Int { side <= 2 ? 2 : side & ~1 }

    /// The preview of `image` in `rendition` (made even here if it is not) at `settings`.
    /// `cachedFrame` gives a frame's rendition pixels when they are at hand already (a frame
    /// cache), else nil; the others are rendered by `renderer` (a fresh one when nil).
    /// `afterFrame` is called after each frame (to stop a build, throw).
    public static func make(
        _ image: AnimatedImage, rendition: FrameRendition, settings: H264Settings, renderer: FrameRenderer? = nil,
        cachedFrame: @escaping (Int) -> Canvas? = { _ in nil }, afterFrame: (Int) throws -> Void = { _ in }
    ) throws -> [UInt8] {
        let rendition = evenSized(rendition)
        let renderer = renderer ?? FrameRenderer(image: image, checkpointBudget: 0)
        return try PreviewMaker.encode(
            image, rendition: rendition, renderer: renderer, cachedFrame: cachedFrame, afterFrame: afterFrame
        ) { _ in
            try H264SequenceEncoder(width: rendition.outputWidth, height: rendition.outputHeight, settings: settings)
        }
    }

    /// What making the MP4 preview of `image` in `rendition` may hold besides the output: the
    /// frames streamed to the encoder and the encoder's own.
    public static func workingBytes(_ image: AnimatedImage, rendition: FrameRendition) -> Int {
        let rendition = evenSized(rendition)
        return PreviewMaker.streamingBytes(image, rendition: rendition)
            + H264SequenceEncoder.workingBytes(
                width: rendition.outputWidth, height: rendition.outputHeight, frameCount: image.frameCount)
    }
}
