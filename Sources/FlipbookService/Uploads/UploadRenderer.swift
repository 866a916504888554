import AnimatedImage
import Foundation

/// Composites and encodes the frames of one upload in progress, outside the frame cache (whose
/// entries have a fixed frame count). One renderer follows the upload: when a longer prefix
/// arrives, the next renderer resumes from the canvas the last one drew, so a reader following
/// the upload costs one frame decode per frame, not a replay from frame 0. The last few encoded
/// frames are kept so that several readers waiting on the same frame share one encode.
///
/// Memory: one canvas (no checkpoints) and at most ``recentLimit`` encoded frames per session.
final class UploadRenderer: @unchecked Sendable {
    static let recentLimit = 8
    /// Where the session's frame requests are answered, one at a time.
    let queue = DispatchQueue(label: "flipbook.upload-frames")

    private let lock = NSLock()
    private let encoder: RenditionEncoder
    private var renderer: FrameRenderer?
    /// The frame `renderer` drew last (-1: none).
    private var drawn = -1
    private var recent: [(key: String, bytes: [UInt8])] = []

    init(encoder: RenditionEncoder) {
        self.encoder = encoder
    }

    /// Frame `index` of `image` (a prefix of the upload) in `rendition`: the bytes the finished
    /// image will serve, since a frame's composite depends only on the frames before it.
    func frame(_ index: Int, of image: AnimatedImage, rendition: FrameRendition) throws -> [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        let key = "\(index)/\(rendition.key)"
        if let hit = recent.first(where: { $0.key == key }) { return hit.bytes }
        if renderer == nil || renderer!.image.frameCount < image.frameCount {
            let next = FrameRenderer(image: image, checkpointBudget: 0)
            if let old = renderer, drawn >= 0, drawn < index, next.canResume(after: drawn) {
                next.resume(after: drawn, output: try old.render(drawn))
            }
            renderer = next
        }
        let canvas = try renderer!.render(index)
        drawn = index
        let bytes = try encoder.encode(canvas, as: rendition, colorSpace: image.colorSpace)
        recent.append((key, bytes))
        if recent.count > Self.recentLimit { recent.removeFirst() }
        return bytes
    }

    /// Lets go of the canvas and the kept frames (the session ended).
    func release() {
        lock.lock()
        renderer = nil
        drawn = -1
        recent = []
        lock.unlock()
    }
}
