/// An animated (or still) image ready to render: the file's bytes, its ``ImageIndex``, its
/// ``Timeline`` and which frames depend on which. Memory held is the file plus the index,
/// never decoded pixels.
///
/// ```swift
/// let image = try AnimatedImage(bytes: fileBytes)
/// let renderer = FrameRenderer(image: image)
/// let png = try PNGEncoder().encode(renderer.render(3))
/// ```
public struct AnimatedImage: Sendable {
    /// How much of the file to check before it is accepted.
    public enum Verification: Sendable {
        /// Decode every frame's data once (no compositing, no encoding) so that `frameCount`
        /// counts exactly the frames that decode, as a browser's would.
        case full
        /// Check only the container; a frame whose data turns out broken is found when
        /// rendering reaches it.
        case structural
        /// The file was verified before (e.g. when it was uploaded) and `frameCount` frames
        /// decoded: index it and keep that many frames, without decoding any.
        case trusted(frameCount: Int)
    }

    /// Changes whenever the same file can come out differently: other pixels (a decoding fix),
    /// other timing or frame counts, other chunks in the served PNGs. The service puts it in its
    /// validators, so HTTP caches never mix what two revisions made of one file.
    /// 2: 16-bit samples keep their high byte; interlaced PNGs decoded by libpng's full API;
    /// a WebP cut short is rejected. 3: frames carry the source's colour-space chunks.
    /// 4: WebP frames blend with Chromium's integer arithmetic; damaged APNG and GIF files keep
    /// the frames Chromium shows (CRCs, cut frames, undefined LZW codes).
    public static let outputRevision = 4

    /// The file's bytes, on the heap or mapped (see ``ImageBytes/storage``).
    public let bytes: ImageBytes
    public private(set) var index: ImageIndex
    public private(set) var timeline: Timeline
    public private(set) var dependencies: FrameDependencies
    /// True when every indexed frame is known to decode.
    public private(set) var isVerified: Bool
    /// What decoding the image takes besides a cache (``DecodeMemory``).
    public private(set) var decodeMemory: DecodeMemory

    public var format: ImageFormat { index.format }
    public var frameCount: Int { index.frames.count }
    public var canvasWidth: Int { index.canvasWidth }
    public var canvasHeight: Int { index.canvasHeight }
    /// The source's colour-space chunks, for ``PNGEncoder/encode(_:colorSpace:)``.
    public var colorSpace: ColorSpaceChunks { index.colorSpace }

    /// Indexes (and, as `verification` says, checks) the file held in `bytes`, which the image
    /// keeps without copying.
    ///
    /// With `backgroundDecoding`, ``Verification/full`` decodes frames on background threads
    /// (one per core, up to 4; ``DecodeAhead``): for the command line, whose previews and
    /// storyboards wait for it; a service's decoding threads should not start more threads.
    public init(
        bytes: ImageBytes, limits: DecodeLimits = .default, verification: Verification = .full,
        backgroundDecoding: Bool = false
    ) throws {
        try Limits.checkFileSize(bytes.count, limits: limits)
        guard let format = ImageFormat.sniff(bytes) else { throw AnimatedImageError.unsupportedFormat }
        var index: ImageIndex
        switch format {
        case .gif: index = try GIFIndexer.index(bytes, limits: limits)
        case .png, .apng: index = try APNGIndexer.index(bytes, limits: limits)
        case .webp: index = try WebPIndexer.index(bytes, limits: limits)
        }
        if index.frames.isEmpty {
            throw AnimatedImageError.noCompleteFrame(format, "the file holds no image")
        }
        if case .trusted(let count) = verification {
            index.truncate(to: max(1, count))
        }
        let memory = DecodeMemory(index: index)
        try Limits.checkDecodeMemory(memory.largestBytes, limits: limits)
        if case .full = verification {
            try Self.verifyFrames(of: &index, bytes: bytes, backgroundDecoding: backgroundDecoding)
        }
        self.decodeMemory = memory
        self.bytes = bytes
        self.index = index
        if case .structural = verification { self.isVerified = false } else { self.isVerified = true }
        self.timeline = Timeline(rawDelaysMs: index.frames.map(\.rawDelayMs), playCount: index.playCount)
        self.dependencies = FrameDependencies(frames: index.frames, canvas: index.canvasRect)
    }

    /// This image with every frame's data decoded once, as ``Verification/full`` does: frames
    /// from the first that does not decode on are dropped (the image is then `truncated`). For
    /// callers that index first (``Verification/structural``) and decide when to pay for the
    /// decoding after — an upload, once the memory it needs (``decodeMemory``) is free.
    ///
    /// With `visit`, the frames are composited as well, and `visit` is given each frame's
    /// composited canvas (exactly what ``FrameRenderer/render(_:)`` returns for it) as it is
    /// made: the one pass that must decode every frame anyway leaves behind whatever the caller
    /// keeps of it (the service keeps a few encoded frames to seek from). Compositing holds one
    /// canvas more (``DecodeMemory/canvasBytes``).
    public func verifyingFrames(visiting visit: ((Int, Canvas) throws -> Void)? = nil) throws -> AnimatedImage {
        guard !isVerified else { return self }
        var verified = self
        try Self.verifyFrames(of: &verified.index, bytes: bytes, visiting: visit)
        verified.isVerified = true
        verified.timeline = Timeline(rawDelaysMs: verified.index.frames.map(\.rawDelayMs), playCount: index.playCount)
        verified.dependencies = FrameDependencies(frames: verified.index.frames, canvas: index.canvasRect)
        verified.decodeMemory = DecodeMemory(index: verified.index)
        return verified
    }

    private static func verifyFrames(
        of index: inout ImageIndex, bytes: ImageBytes, backgroundDecoding: Bool = false,
        visiting visit: ((Int, Canvas) throws -> Void)? = nil
    ) throws {
        let decoder = Self.decoder(for: index, bytes: bytes)
        var compositor = visit.map { _ in Compositor(width: index.canvasWidth, height: index.canvasHeight) }
        let startsClean = visit == nil ? [] : FrameDependencies(frames: index.frames, canvas: index.canvasRect).startsClean
        let ahead =
            backgroundDecoding && index.frames.count >= 3
            ? DecodeAhead(decoder: decoder, frames: index.frames, range: 0...(index.frames.count - 1)) : nil
        defer { ahead?.cancel() }
        for (i, frame) in index.frames.enumerated() {
            let patch: FramePatch
            do {
                patch = try ahead?.next().get() ?? decoder.decode(frame)
            } catch let error as FrameDataError {
                if i == 0 { throw AnimatedImageError.noCompleteFrame(index.format, error.reason) }
                index.truncate(to: i)
                break
            }
            if let visit {  // then there is a compositor
                compositor!.draw(patch, as: frame, startsClean: startsClean[i])
                try visit(i, compositor!.canvas)
            }
        }
    }

    /// Copies `bytes` into an ``ImageBytes`` and indexes them (tests, the CLI).
    public init(
        bytes: [UInt8], limits: DecodeLimits = .default, verification: Verification = .full,
        backgroundDecoding: Bool = false
    ) throws {
        try self.init(
            bytes: ImageBytes(bytes), limits: limits, verification: verification, backgroundDecoding: backgroundDecoding)
    }

    /// A decoder for rendering. A verified image's frames are known to pass the checks that
    /// only decide whether a frame decodes at all (``GIFCodeCheck``), so they are not run again.
    func makeDecoder() -> any FrameDecoder {
        Self.decoder(for: index, bytes: bytes, checked: !isVerified)
    }

    private static func decoder(for index: ImageIndex, bytes: ImageBytes, checked: Bool = true) -> any FrameDecoder {
        switch index.header {
        case .gif(let header): return GIFFrameDecoder(bytes: bytes, header: header, checksCodes: checked)
        case .png(let header): return APNGFrameDecoder(bytes: bytes, header: header)
        case .webp(let animated): return WebPFrameDecoder(bytes: bytes, isAnimated: animated)
        }
    }
}
