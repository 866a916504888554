import AnimatedImage
import FoundationEssentials
import Glibc

/// An upload's seek anchors (``SeekAnchors``), kept on disk with the image's other products:
/// `derived/<sha256>/anchors-<interval>-z<level>-r<revision>/<k>.png`, one file per anchor
/// frame k, the bytes `GET /frames/{id}/{k}` serves. After a restart (or on a replica sharing
/// the data directory) the frame cache holds none of them, and the first request far into the
/// image resumes from the nearest one on disk instead of replaying from frame 0. Like every
/// product they are kept within `derived.maxBytes` (least recently used first), deleted with
/// the image, and never rewritten (the name says what made them). Not put in the shared store of
/// `storage.backend = s3`: fetching them would cost about what replaying does.
extension DerivedProducts {
    /// The directory name of the anchors: their spacing, the PNG deflate level and the revision
    /// of Flipbook's output all change their bytes.
    var anchorsName: String {
        "anchors-\(SeekAnchors.interval)-z\(pngCompressionLevel)-r\(AnimatedImage.outputRevision)"
    }

    /// Writes the anchors of a stored upload (none: nothing is written).
    func keepAnchors(_ frames: [(index: Int, png: [UInt8])], of sha256: String) {
        guard !frames.isEmpty, !store.contains(sha256, anchorsName) else { return }
        // Gone once committed (moved into place); what a failed write leaves is removed here,
        // not at the next start.
        var staging: String? = nil
        defer { if let staging { try? FileManager.default.removeItem(atPath: staging) } }
        do {
            staging = try store.makeStaging()
            for frame in frames {
                try Data(frame.png).write(to: URL(fileURLWithPath: staging! + "/\(frame.index).png"))
            }
            try store.commit(staging!, sha256, anchorsName)
        } catch {
            logger.warning("seek anchors not kept", metadata: ["sha256": "\(sha256)", "error": "\(error)"])
        }
    }

    /// The nearest kept anchor before frame `index` of `sha256`, with its PNG; nil when there is
    /// none (not kept, evicted, or the image has no anchor before `index`).
    func keptAnchor(of sha256: String, before index: Int) -> (frame: Int, png: [UInt8])? {
        let interval = SeekAnchors.interval
        guard index > interval, store.contains(sha256, anchorsName) else { return nil }
        let directory = store.path(sha256, anchorsName)
        // Anchors are every interval-th frame but those disposed to "previous": the nearest two.
        for frame in stride(from: (index - 1) / interval * interval, through: interval, by: -interval).prefix(2) {
            if let png = FileManager.default.contents(atPath: directory + "/\(frame).png") {
                return (frame, [UInt8](png))
            }
        }
        return nil
    }
}
