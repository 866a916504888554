import AnimatedImage

/// Makes an image's preview as WebM: every frame of a rendition (scaled exactly as the frame
/// routes and the other previews scale it) as one VP9 frame (``VP9SequenceEncoder``), each at
/// its `timestampsMs` lasting its effective delay (`delaysMs`, in 1 ms units: exactly), with an
/// alpha stream when any frame has transparency. VP9 takes odd sides, so the rendition is used
/// as it is. A WebM has no loop count (`<video loop>` loops forever; the player plays a finite
/// `playCount` itself).
///
/// Whether there is transparency is known only once every frame is composited: the encoder
/// starts with alpha only when the first frame has transparency, and a later frame with
/// transparency starts it again (``OptionalAlphaPreviewMaker``, as for AVIF).
public enum WebMPreviewMaker: OptionalAlphaPreviewMaker {
    /// Changes whenever the same frames come out as other WebM bytes (encoder settings, muxer):
    /// a kept preview's name and ETag carry it.
    public static let revision = 1

    /// VP9 frames in a WebM, with an alpha stream when `alpha`.
    public static func sequenceEncoder(
        _ image: AnimatedImage, width: Int, height: Int, alpha: Bool, settings: VP9Settings
    ) throws -> any AnimationEncoding {
        try VP9SequenceEncoder(width: width, height: height, alpha: alpha, settings: settings)
    }

    /// What making the WebM preview of `image` in `rendition` may hold besides the output: the
    /// frames streamed to the encoder (``PreviewMaker/streamingBytes(_:rendition:)``) and the
    /// encoder with an alpha stream (``VP9SequenceEncoder/workingBytes(width:height:alpha:)``).
    public static func workingBytes(_ image: AnimatedImage, rendition: FrameRendition) -> Int {
        let (width, height) = (rendition.outputWidth, rendition.outputHeight)
        return PreviewMaker.streamingBytes(image, rendition: rendition)
            + VP9SequenceEncoder.workingBytes(width: width, height: height, alpha: true)
    }
}
