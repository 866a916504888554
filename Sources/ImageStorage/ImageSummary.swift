import AnimatedImage

/// What an entry of `GET /images` shows of an image (`ImageSummary` in openapi.yaml): its id,
/// source, content hash and display name with its metadata's headline fields, and the output
/// revision that derived them (for re-indexing). The listing index keeps one per stored image
/// (``ListingIndex``), so that a page is answered without reading the records.
package struct ImageSummary: Sendable, Equatable {
    package var id: String
    package var sha256: String
    package var source: StoredImage.Source
    package var name: String?
    package var headline: ImageHeadline
    /// The record's ``StoredImage/outputRevision``.
    package var outputRevision: Int?
}

// Its other initialisers are in extensions, so that the memberwise one is synthesised.
extension ImageSummary {
    /// The summary of `record`.
    package init(_ record: StoredImage) {
        self.init(
            id: record.id, sha256: record.sha256, source: record.source, name: record.name,
            headline: ImageHeadline(record.metadata), outputRevision: record.outputRevision)
    }

    /// Whether the headline is what this build derives from the original.
    package var isCurrentRevision: Bool { outputRevision == AnimatedImage.outputRevision }
}

/// The fields of an image's metadata that its listing entry shows beside the metadata document.
package struct ImageHeadline: Sendable, Equatable {
    package var format: String
    package var mimeType: String
    package var width: Int
    package var height: Int
    package var frameCount: Int
    package var animated: Bool
    package var playCount: Int
    package var durationMs: Int
    package var fileBytes: Int
}

extension ImageHeadline {
    /// The headline fields of `metadata`.
    package init(_ metadata: ImageMetadata) {
        self.init(
            format: metadata.format, mimeType: metadata.mimeType, width: metadata.width, height: metadata.height,
            frameCount: metadata.frameCount, animated: metadata.animated, playCount: metadata.playCount,
            durationMs: metadata.durationMs, fileBytes: metadata.fileBytes)
    }
}
