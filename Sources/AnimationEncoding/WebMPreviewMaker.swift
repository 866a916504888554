import AnimatedImage

/// Makes an image's preview as WebM: every frame of a rendition (scaled exactly as the frame
/// routes and the other previews scale it) as one VP9 frame (``VP9SequenceEncoder``), each at
/// its `timestampsMs` lasting its effective delay (`delaysMs`, in 1 ms units: exactly), with an
/// alpha stream when any frame has transparency. VP9 takes odd sides, so the rendition is used
/// as it is. A WebM has no loop count (`<video loop>` loops forever; the player plays a finite
/// `playCount` itself).
///
/// Whether there is transparency is known only once every frame is composited: the encoder
/// starts with alpha when the first frame has transparency, without it otherwise, and when a
/// later frame brings transparency the preview is encoded again, with alpha, from the first
/// frame (as ``AVIFPreviewMaker`` does).
public enum WebMPreviewMaker {
    /// Changes whenever the same frames come out as other WebM bytes (encoder settings, muxer):
    /// a kept preview's name and ETag carry it.
    public static let revision = 1

    /// The preview of `image` in `rendition` at `settings`. `cachedFrame` gives a frame's
    /// rendition pixels when they are at hand already (a frame cache), else nil; the others are
    /// rendered by `renderer` (a fresh one when nil). `afterFrame` is called after each frame
    /// (to stop a build, throw).
    public static func make(
        _ image: AnimatedImage, rendition: FrameRendition, settings: VP9Settings, renderer: FrameRenderer? = nil,
        cachedFrame: @escaping (Int) -> Canvas? = { _ in nil }, afterFrame: (Int) throws -> Void = { _ in }
    ) throws -> [UInt8] {
        let renderer = renderer ?? FrameRenderer(image: image, checkpointBudget: 0)
        let (width, height) = (rendition.outputWidth, rendition.outputHeight)
        do {
            return try PreviewMaker.encode(
                image, rendition: rendition, renderer: renderer, cachedFrame: cachedFrame, afterFrame: afterFrame
            ) { first in
                try VP9SequenceEncoder(width: width, height: height, alpha: !first.isOpaque, settings: settings)
            }
        } catch let error as VP9EncodingError where error == .alphaNeeded {
            return try PreviewMaker.encode(
                image, rendition: rendition, renderer: renderer, cachedFrame: cachedFrame, afterFrame: afterFrame
            ) { _ in
                try VP9SequenceEncoder(width: width, height: height, alpha: true, settings: settings)
            }
        }
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
