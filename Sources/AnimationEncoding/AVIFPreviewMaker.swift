import AnimatedImage

/// Makes an image's preview as AVIF: every frame of a rendition (scaled exactly as the frame
/// routes and the WebP preview scale it) in one AV1 image sequence (``AVIFSequenceEncoder``),
/// each frame lasting its effective delay (`delaysMs`, in a 1000 Hz timescale: exactly), with an
/// alpha plane when any frame has transparency. A still image gives a still AVIF.
///
/// Whether there is transparency is known only once every frame is composited: the encoder
/// starts with an alpha plane when the first frame has transparency, without one otherwise,
/// and when a later frame brings transparency the preview is encoded again, with alpha, from
/// the first frame. The sequence plays the image's `playCount` times (0: forever), written as
/// an edit list (``AVIFLoopCount``: libavif 0.11 writes none).
public enum AVIFPreviewMaker {
    /// Changes whenever the same frames come out as other AVIF bytes (encoder settings, library
    /// behaviour): a kept preview's name and ETag carry it.
    /// 3: libaom always has 2 threads or more (``AVIFSettings/minimumThreads``), so a replica
    /// with one core no longer makes other bytes under the same name.
    public static let revision = 3

    /// The preview of `image` in `rendition` at `settings`. `cachedFrame` gives a frame's
    /// rendition pixels when they are at hand already (a frame cache), else nil; the others are
    /// rendered by `renderer` (a fresh one when nil). `afterFrame` is called after each frame
    /// (to stop a build, throw).
    public static func make(
        _ image: AnimatedImage, rendition: FrameRendition, settings: AVIFSettings, renderer: FrameRenderer? = nil,
        cachedFrame: @escaping (Int) -> Canvas? = { _ in nil }, afterFrame: (Int) throws -> Void = { _ in }
    ) throws -> [UInt8] {
        let renderer = renderer ?? FrameRenderer(image: image, checkpointBudget: 0)
        let (width, height) = (rendition.outputWidth, rendition.outputHeight)
        let playCount = image.timeline.playCount
        do {
            return try PreviewMaker.encode(
                image, rendition: rendition, renderer: renderer, cachedFrame: cachedFrame, afterFrame: afterFrame
            ) { first in
                try AVIFSequenceEncoder(
                    width: width, height: height, alpha: !first.isOpaque, playCount: playCount, settings: settings)
            }
        } catch let error as AVIFEncodingError where error == .alphaNeeded {
            return try PreviewMaker.encode(
                image, rendition: rendition, renderer: renderer, cachedFrame: cachedFrame, afterFrame: afterFrame
            ) { _ in
                try AVIFSequenceEncoder(width: width, height: height, alpha: true, playCount: playCount, settings: settings)
            }
        }
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
