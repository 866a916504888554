import AnimatedImage
import FoundationEssentials
import FrameCache

/// Frames to seek from, made while an upload is verified: the first request far into a new
/// image then replays at most ``interval`` frames, not every frame before it.
///
/// Verifying an upload decodes every frame's data anyway
/// (``AnimatedImage/verifyingFrames(visiting:)``); compositing them too costs little more. Every
/// ``interval``-th frame is encoded as the frame routes encode it (full size, PNG, the cache's own
/// encoder: the very bytes `GET /frames/{id}/{k}` serves) and staged in the frame cache; once
/// the image is stored they are adopted as its cached frames, and the cache's decoders resume from
/// the nearest one before a requested frame (``FrameRenderer/resume(after:png:)``) instead of
/// replaying from frame 0. Like every cached frame they are in the cache's budget and go first
/// when it needs room. They are kept on disk as well, with the image's storyboards and previews
/// (``DerivedProducts/keepAnchors(_:of:)``), for the first requests after a restart.
final class SeekAnchors: @unchecked Sendable {
    /// Frames between anchors. 32 keeps `large.gif` (1280×720, 300 frames) to 9 anchors, ≈ 2 MB
    /// of PNG and ≈ 60 ms more verification, and a cold frame to at most 31 frame decodes plus
    /// one PNG decode (BENCHMARKS.md, "Renditions: a cold frame far into an animation").
    static let interval = 32

    /// Anchors are not made for canvases over this many bytes (16 MP): each would take longer
    /// to encode than most replays it saves, and a hostile file of huge frames would make every
    /// upload slow.
    static let maxCanvasBytes = 64 << 20
    /// The anchors of one upload held on the heap until it is stored (their copies in the cache
    /// are in its budget) stop at this many bytes; an anchor that would pass it is not kept.
    static let maxBytes = 32 << 20

    /// The staging key: unique per upload.
    let owner = "seek-anchors-\(UUID().uuidString)"
    private let cache: FrameCache
    /// ``maxCanvasBytes`` and ``maxBytes``, smaller in tests.
    private let canvasLimit: Int
    private let byteLimit: Int
    /// The anchors made, by frame (one verification thread writes them), to keep on disk too.
    private(set) var frames: [(index: Int, png: [UInt8])] = []
    private var heldBytes = 0

    init(cache: FrameCache, maxCanvasBytes: Int = SeekAnchors.maxCanvasBytes, maxBytes: Int = SeekAnchors.maxBytes) {
        self.cache = cache
        canvasLimit = maxCanvasBytes
        byteLimit = maxBytes
    }

    /// The verification's visitor: stages frame `index` of `image` when it is an anchor. A frame
    /// disposed to "previous" is skipped (resuming after it needs more than its output); an
    /// encoding that fails only means one anchor fewer.
    func visit(_ image: AnimatedImage, _ index: Int, _ canvas: Canvas) {
        guard image.frameCount > Self.interval, index > 0, index % Self.interval == 0,
            image.index.frames[index].disposal != .previous, image.decodeMemory.canvasBytes <= canvasLimit,
            heldBytes < byteLimit
        else { return }
        let rendition = FrameRendition.exact(width: image.canvasWidth, height: image.canvasHeight)
        guard let encoded = try? cache.encoder.encode(canvas, as: rendition, colorSpace: image.colorSpace),
            heldBytes + encoded.count <= byteLimit
        else { return }
        heldBytes += encoded.count
        cache.stage(encoded, owner: owner, rendition: rendition, index: index)
        frames.append((index, encoded))
    }

    /// Makes the anchors frames of the stored image (`image` says what it is for the cache).
    func adopt(as image: (FrameRendition) -> CacheableImage) {
        cache.adoptStaged(owner: owner, as: image)
    }

    /// Lets go of anchors not adopted (the upload was refused, or was stored already).
    func discard() {
        cache.discardStaged(owner: owner)
    }
}
