import AnimatedImage

/// A preview format whose sequence encoder carries transparency only when asked to (an AVIF's
/// alpha plane, a WebM's alpha stream): ``AVIFPreviewMaker`` and ``WebMPreviewMaker``.
///
/// Whether there is transparency is known only once every frame is composited, so ``make``
/// starts the encoder with alpha when the first frame has transparency, without it otherwise;
/// when a later frame brings transparency the encoder refuses it (an ``AlphaNeededError``) and
/// the preview is encoded again, with alpha, from the first frame.
public protocol OptionalAlphaPreviewMaker {
    /// The encoder's settings (``AVIFSettings``, ``VP9Settings``).
    associatedtype Settings
    /// The sequence encoder of `image`'s preview, `width`×`height`, with or without alpha.
    static func sequenceEncoder(
        _ image: AnimatedImage, width: Int, height: Int, alpha: Bool, settings: Settings
    ) throws -> any AnimationEncoding
}

extension OptionalAlphaPreviewMaker {
    /// The preview of `image` in `rendition` at `settings`. `cachedFrame` gives a frame's
    /// rendition pixels when they are at hand already (a frame cache), else nil; the others are
    /// rendered by `renderer` (a fresh one when nil). `afterFrame` is called after each frame
    /// (to stop a build, throw).
    public static func make(
        _ image: AnimatedImage, rendition: FrameRendition, settings: Settings, renderer: FrameRenderer? = nil,
        cachedFrame: @escaping (Int) -> Canvas? = { _ in nil }, afterFrame: (Int) throws -> Void = { _ in }
    ) throws -> [UInt8] {
        let renderer = renderer ?? FrameRenderer(image: image, checkpointBudget: 0)
        let (width, height) = (rendition.outputWidth, rendition.outputHeight)
        func encode(withAlpha: Bool) throws -> [UInt8] {
            try PreviewMaker.encode(
                image, rendition: rendition, renderer: renderer, cachedFrame: cachedFrame, afterFrame: afterFrame
            ) { first in
                try sequenceEncoder(
                    image, width: width, height: height, alpha: withAlpha || !first.isOpaque, settings: settings)
            }
        }
        do {
            return try encode(withAlpha: false)
        } catch let error as any AlphaNeededError where error.isAlphaNeeded {
            return try encode(withAlpha: true)
        }
    }
}

/// An encoder's error that may be its refusal of a frame with transparency when it was made
/// without alpha (``AVIFEncodingError/alphaNeeded``, ``VP9EncodingError/alphaNeeded``).
public protocol AlphaNeededError: Error {
    /// True for that refusal: the preview is encoded again, with alpha.
    var isAlphaNeeded: Bool { get }
}

extension AVIFEncodingError: AlphaNeededError {
    public var isAlphaNeeded: Bool { self == .alphaNeeded }
}

extension VP9EncodingError: AlphaNeededError {
    public var isAlphaNeeded: Bool { self == .alphaNeeded }
}
