import AnimatedImage
import AnimationEncoding
import SystemResources

extension PreviewFormat {
    /// `image`'s preview in this format, its frames scaled to `rendition`: what the preview route
    /// keeps and `flipbook preview` writes, the same bytes from both. The encoder's quality is
    /// `rendition.quality`, else the format's default; AVIF's libaom runs on every core the
    /// process may use, as the WebP previews' parallel encoder does (its output is the same for
    /// any number of threads from 2 up, ``AVIFSettings/minimumThreads``); an MP4 composites
    /// transparency onto `background`. `renderer` and `cachedFrame` are passed on to the maker
    /// (``PreviewMaker/make(_:rendition:renderer:encoder:cachedFrame:afterFrame:)``).
    public func makePreview(
        of image: AnimatedImage, rendition: FrameRendition, background: OpaqueBackground,
        renderer: FrameRenderer? = nil, cachedFrame: @escaping (Int) -> Canvas? = { _ in nil }
    ) throws -> [UInt8] {
        switch self {
        case .webp:
            return try PreviewMaker.make(image, rendition: rendition, renderer: renderer, cachedFrame: cachedFrame)
        case .avif:
            let settings = AVIFSettings(
                quality: rendition.quality ?? AVIFSettings.defaultQuality, threads: CPULimit.usableCores)
            return try AVIFPreviewMaker.make(
                image, rendition: rendition, settings: settings, renderer: renderer, cachedFrame: cachedFrame)
        case .mp4:
            let settings = H264Settings(quality: rendition.quality ?? H264Settings.defaultQuality, background: background)
            return try MP4PreviewMaker.make(
                image, rendition: rendition, settings: settings, renderer: renderer, cachedFrame: cachedFrame)
        case .webm:
            let settings = VP9Settings(quality: rendition.quality ?? VP9Settings.defaultQuality)
            return try WebMPreviewMaker.make(
                image, rendition: rendition, settings: settings, renderer: renderer, cachedFrame: cachedFrame)
        }
    }

    /// The revision of this format's preview encoding, as kept previews' names and ETags carry
    /// it (`e4`, `a3`): it changes whenever the same frames come out as other bytes.
    var encoderRevision: String {
        switch self {
        case .webp: "e\(PreviewMaker.revision)"
        case .avif: "a\(AVIFPreviewMaker.revision)"
        case .mp4: "h\(MP4PreviewMaker.revision)"
        case .webm: "v\(WebMPreviewMaker.revision)"
        }
    }

    /// What making `image`'s preview in this format may hold besides its output.
    func workingBytes(_ image: AnimatedImage, rendition: FrameRendition) -> Int {
        switch self {
        case .webp: PreviewMaker.workingBytes(image, rendition: rendition)
        case .avif: AVIFPreviewMaker.workingBytes(image, rendition: rendition)
        case .mp4: MP4PreviewMaker.workingBytes(image, rendition: rendition)
        case .webm: WebMPreviewMaker.workingBytes(image, rendition: rendition)
        }
    }
}
