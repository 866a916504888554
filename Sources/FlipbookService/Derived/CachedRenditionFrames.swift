import AnimatedImage
import FrameCache
import ImageStorage

/// The frames of one rendition that the frame cache holds already, as pixels, for a build that
/// would otherwise decode and scale them again: a frame served losslessly (PNG) in the same
/// geometry as the product's frames is those frames exactly, so it is decoded from the cache's
/// PNG (one small inflate instead of decoding the original's frames up to it and scaling).
/// Lossy frames are never taken: they are not the product's pixels. Used by one thread at a time (a build's frame producer).
final class CachedRenditionFrames {
    private let cache: FrameCache?
    private let key: String
    /// Frames taken from the cache so far.
    private(set) var taken = 0

    /// The frames of `record` scaled as `rendition` (its format and quality are ignored).
    init(cache: FrameCache?, record: StoredImage, rendition: FrameRendition) {
        self.cache = cache
        let lossless = FrameRendition(
            scaledWidth: rendition.scaledWidth, scaledHeight: rendition.scaledHeight, crop: rendition.crop, format: .png)
        key = CacheableImage.key(
            id: record.frameCacheID, rendition: lossless, canvasWidth: record.metadata.width,
            canvasHeight: record.metadata.height)
    }

    /// Frame `index`'s pixels when the cache holds its PNG, else nil (render it).
    func frame(_ index: Int) -> Canvas? {
        guard let encoded = cache?.peekFrame(id: key, index: index),
            let image = try? AnimatedImage(bytes: encoded.bytes.array, verification: .structural),
            image.frameCount == 1,
            let canvas = try? FrameRenderer(image: image, checkpointBudget: 0).render(0)
        else { return nil }
        taken += 1
        return canvas
    }
}
