import FrameCache
import Logging

/// What answering with a stored image's frame takes: its record (``RecordLookup``), the rendition
/// the request asks for (``RenditionResolver``), the frame cache's view of stored images
/// (``ImageFrames``), the clients' AVIF encode slots (``ClientEncodeLimit``) and the log of frames
/// that could not be made. One value, built where the routes are composed, for both routes that
/// answer with such a frame: ``FrameRoutes``, and ``UploadFrameRoutes`` once a session is stored.
struct FrameServing: Sendable {
    let lookup: RecordLookup
    let renditions: RenditionResolver
    let frames: ImageFrames
    let avifEncodes: ClientEncodeLimit
    let logger: Logger

    var cache: FrameCache { frames.cache }
}
