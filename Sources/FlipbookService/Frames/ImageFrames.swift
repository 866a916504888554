import AnimatedImage
import FrameCache
import HTTPServer
import ImageStorage

/// Stored images as the frame cache sees them: keyed by their content (two ids with the same
/// bytes share frames, and a replaced named image never serves its old frames), loaded from the
/// store on a decode thread, each frame prepared with its answers (``FrameResponses``) as it
/// enters the cache, and a cold frame resumed from the nearest seek anchor kept on disk.
struct ImageFrames: Sendable {
    let store: ImageStore
    let cache: FrameCache
    /// Where the seek anchors of uploads are kept (``DerivedProducts/keptAnchor(of:before:)``).
    let derived: DerivedProducts
    /// `cache.pngCompressionLevel`: part of every frame's `ETag`.
    let pngLevel: Int

    /// `record` in `rendition`, as the frame cache sees it.
    func cacheable(_ record: StoredImage, _ rendition: FrameRendition) -> CacheableImage {
        let (store, derived, level, loops) = (self.store, self.derived, pngLevel, cache.readers)
        return CacheableImage(
            id: record.frameCacheID, frameCount: record.metadata.frameCount,
            canvasWidth: record.metadata.width, canvasHeight: record.metadata.height, rendition: rendition,
            load: { try store.loadImage(record) },
            prepare: { index, bytes in
                FrameResponses(
                    FrameAnswer(record: record, index: index, rendition: rendition, pngLevel: level), bytes: bytes,
                    loops: loops)
            },
            seekAnchor: { derived.keptAnchor(of: record.sha256, before: $0) })
    }

    /// The frame cache's key of `record` in `rendition`.
    func cacheKey(_ record: StoredImage, _ rendition: FrameRendition) -> String {
        CacheableImage.key(
            id: record.frameCacheID, rendition: rendition, canvasWidth: record.metadata.width,
            canvasHeight: record.metadata.height)
    }

    /// ``cacheKey(_:_:)`` when it is not `record`'s ``StoredImage/frameCacheID`` itself; nil when
    /// it is (the full-size PNG), for the caller to read the id where the record holds it: a key
    /// made of it is a copy of the record's string, retained and released on every hit.
    func renditionCacheKey(_ record: StoredImage, _ rendition: FrameRendition) -> String? {
        CacheableImage.isKeyedByID(rendition, canvasWidth: record.metadata.width, canvasHeight: record.metadata.height)
            ? nil : cacheKey(record, rendition)
    }

    /// The answer of frame `index` of `record` in `rendition`.
    func answer(
        _ record: StoredImage, index: Int, rendition: FrameRendition, caching: CachePolicy? = nil,
        extra: HTTPHeaders = HTTPHeaders()
    ) -> FrameAnswer {
        FrameAnswer(record: record, index: index, rendition: rendition, pngLevel: pngLevel, caching: caching, extra: extra)
    }
}

extension StoredImage {
    /// The frame cache's id of this image: its content, so two ids with the same bytes share one
    /// cache entry.
    var frameCacheID: String { sha256 }
}
