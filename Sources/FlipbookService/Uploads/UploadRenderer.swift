import AnimatedImage
import Dispatch
import FoundationEssentials
import FrameCache
import SystemResources

/// Composites and encodes the frames of one upload in progress. One renderer follows the
/// upload: when a longer prefix arrives, the next renderer resumes from the canvas the last one
/// drew, so a reader following the upload costs one frame decode per frame, not a replay from
/// frame 0. The encoded frames are staged in the frame cache under the session's id
/// (``FrameCache/stage(_:owner:rendition:index:)``): readers of the upload share them, and when
/// the upload is stored they become the stored image's frames (no second decode).
///
/// Memory: one canvas (no checkpoints) here; the staged frames are the cache's, in its budget.
final class UploadRenderer: @unchecked Sendable {
    /// Where the session's frame requests are answered, one at a time.
    let queue = DispatchQueue(label: "flipbook.upload-frames")
    /// The session's id: the owner of its staged frames.
    let owner: String

    private let lock = ConditionLock()
    private let encoder: RenditionEncoder
    private let cache: FrameCache
    private var renderer: FrameRenderer?
    /// The frame `renderer` drew last (-1: none).
    private var drawn = -1
    /// Set when the session ended: nothing more is staged.
    private var released = false

    init(owner: String, encoder: RenditionEncoder, cache: FrameCache) {
        self.owner = owner
        self.encoder = encoder
        self.cache = cache
    }

    /// Frame `index` of `image` (a prefix of the upload) in `rendition`: the bytes the finished
    /// image will serve, since a frame's composite depends only on the frames before it.
    func frame(_ index: Int, of image: AnimatedImage, rendition: FrameRendition) throws -> FrameBytes {
        lock.lock()
        defer { lock.unlock() }
        if let staged = cache.stagedFrame(owner: owner, rendition: rendition, index: index) { return staged }
        if renderer == nil || renderer!.image.frameCount < image.frameCount {
            let next = FrameRenderer(image: image, checkpointBudget: 0)
            if let old = renderer, drawn >= 0, drawn < index, next.canResume(after: drawn) {
                next.resume(after: drawn, output: try old.render(drawn))
            }
            renderer = next
        }
        let canvas = try renderer!.render(index)
        drawn = index
        let encoded = try encoder.encode(canvas, as: rendition, colorSpace: image.colorSpace)
        if released {
            // A request that was answered as the session ended: it got its frame, but the
            // canvas and the mapped prefix go now, not when the session expires.
            renderer = nil
            drawn = -1
            return FrameBytes(encoded)
        }
        return cache.stage(encoded, owner: owner, rendition: rendition, index: index)
    }

    /// Whether a canvas (and the prefix it was drawn from) is held, for tests.
    var holdsCanvas: Bool {
        lock.lock()
        defer { lock.unlock() }
        return renderer != nil
    }

    /// Lets go of the canvas and of the staged frames not adopted (the session ended: call
    /// after the frame cache adopted them, when it was stored).
    func release() {
        lock.lock()
        renderer = nil
        drawn = -1
        released = true
        lock.unlock()
        cache.discardStaged(owner: owner)
    }
}
