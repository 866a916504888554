import AnimatedImage

/// Makes an image's preview as AVIF: every frame of a rendition (scaled exactly as the frame
/// routes and the WebP preview scale it) in one AV1 image sequence (``AVIFSequenceEncoder``),
/// each frame lasting its effective delay (`delaysMs`, in a 1000 Hz timescale: exactly), with an
/// alpha plane when any frame has transparency. A still image gives a still AVIF.
///
/// Whether there is transparency is known only once every frame is composited: the encoder
/// starts with an alpha plane only when the first frame has transparency, and a later frame
/// with transparency starts it again (``OptionalAlphaPreviewMaker``). The sequence plays the
/// image's `playCount` times (0: forever), written as an edit list (``AVIFLoopCount``: libavif
/// 0.11 writes none).
public enum AVIFPreviewMaker: OptionalAlphaPreviewMaker {
    /// Changes whenever the same frames come out as other AVIF bytes (encoder settings, library
    /// behaviour): a kept preview's name and ETag carry it.
    /// 3: libaom always has 2 threads or more (``AVIFSettings/minimumThreads``), so a replica
    /// with one core no longer makes other bytes under the same name.
    public static let revision = 3

    /// An AV1 image sequence playing the image's `playCount` times.
    public static func sequenceEncoder(
        _ image: AnimatedImage, width: Int, height: Int, alpha: Bool, settings: AVIFSettings
    ) throws -> any AnimationEncoding {
        try AVIFSequenceEncoder(
            width: width, height: height, alpha: alpha, playCount: image.timeline.playCount, settings: settings)
    }

    /// What making the AVIF preview of `image` in `rendition` may hold besides the output: the
    /// frames streamed to the encoder (``PreviewMaker/streamingBytes(_:rendition:)``), the
    /// encoder with an alpha plane (``AVIFSequenceEncoder/workingBytes(width:height:alpha:)``),
    /// and the frame it holds back.
    public static func workingBytes(_ image: AnimatedImage, rendition: FrameRendition) -> Int {
        let (width, height) = (rendition.outputWidth, rendition.outputHeight)
        return PreviewMaker.streamingBytes(image, rendition: rendition)
            + AVIFSequenceEncoder.workingBytes(width: width, height: height, alpha: true) + width * height * 4
    }
}
