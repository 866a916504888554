import AnimatedImage
import Synchronization

/// The decoding side of one image, shared by every rendition of it the cache holds: the one
/// decoder (``FrameRenderer``: the image's file and index, canvas and checkpoints) and its
/// accounting, and whether a decode thread holds it. Each rendition is an ``ImageEntry`` with
/// its own frames, playhead and window; a thread that composites frame k for one of them
/// encodes it for every other rendition that wants frame k too, so frame k is decoded and
/// composited once however many renditions play at once.
///
/// Used under the cache's lock, except ``busy``, which the hit path reads (an atomic).
final class ImageSource: @unchecked Sendable {
    /// The content key the renditions share (the cache's image id).
    let id: String
    let frameCount: Int
    /// RGBA bytes of one canvas.
    let decodedFrameBytes: Int
    let canvasWidth: Int
    let canvasHeight: Int
    let load: @Sendable () throws -> AnimatedImage
    /// Frames kept outside the cache to resume from (``CacheableImage/seekAnchor``).
    let seekAnchor: CacheableImage.SeekAnchor?

    /// The renditions of this image the cache holds, the full-size PNG one among them when it
    /// is held.
    var entries: [ImageEntry] = []

    /// The image (its file's bytes and its index), held only with its decoder: an image whose
    /// decoder is dropped lets go of its file (a mapping of the store's, or a copy on the heap),
    /// and the next job loads it again (``CacheableImage/load``). While held it is counted in the
    /// budget with the decoder (``imageBytes``), so the budget bounds how many files the cache
    /// keeps open — each mapping is one of the process's `vm.max_map_count`.
    var image: AnimatedImage? { renderer?.image }
    var renderer: FrameRenderer?
    /// Bytes accounted for the renderer: its canvas, its checkpoints and its image
    /// (``imageBytes``).
    var rendererBytes = 0
    /// The part of ``rendererBytes`` that is the image (``residentBytes(of:)``).
    var imageBytes = 0
    /// Set while busy when a purge wants the checkpoints gone.
    var discardCheckpointsAfterJob = false
    /// Set while busy when a critical purge wants the decoder gone (unless the image is asked
    /// for again before the job ends).
    var dropRendererAfterJob = false

    /// Start of each frame on the played timeline and the length of one play, in milliseconds;
    /// known once the image is loaded.
    private(set) var timestampsMs: [Int]?
    private(set) var durationMs = 0

    private let atomicBusy = Atomic<Bool>(false)

    /// The rendition whose one-off request a decode thread is making beside the busy decoder,
    /// on a decoder of its own (``CachePolicy/Job/beside``), if any: at most one per image.
    var besideJob: ImageEntry?

    /// The renditions of one image the cache keeps at most; a new one beyond it replaces the
    /// least recently used rendition that is not decoded ahead and has nobody waiting (a client
    /// cycling through sizes holds at most this many entries of an image, whatever it asks).
    static let maxRenditions = 32

    init(_ image: CacheableImage) {
        id = image.id
        frameCount = image.frameCount
        decodedFrameBytes = image.canvasWidth * image.canvasHeight * 4
        canvasWidth = image.canvasWidth
        canvasHeight = image.canvasHeight
        load = image.load
        seekAnchor = image.seekAnchor
    }

    /// A decode thread holds the renderer.
    var busy: Bool {
        get { atomicBusy.load(ordering: .relaxed) }
        set { atomicBusy.store(newValue, ordering: .relaxed) }
    }

    /// No decode thread holds the renderer, and there is none (nor bytes counted for one).
    var holdsNoDecoder: Bool { !busy && renderer == nil && rendererBytes == 0 }

    /// The full-size PNG rendition, whose frames can seed the renderer (``ImageEntry/resumePoint(before:in:reach:)``).
    var exactEntry: ImageEntry? { entries.first { $0.isExact } }

    /// Notes the frames' timing of the image, once it is loaded (kept after the image goes).
    func learnTiming(of image: AnimatedImage) {
        let timeline = image.timeline
        guard timestampsMs == nil, timeline.timestampsMs.count == frameCount else { return }
        timestampsMs = timeline.timestampsMs
        durationMs = timeline.durationMs
    }

    /// What holding `image` costs against the budget: its index (a descriptor per frame, the
    /// timeline, the format's tables) and its file — the bytes themselves when they are on the
    /// heap (anonymous memory, freed with the decoder), `mappingBytes` when they are mapped. A
    /// mapped file's pages are not counted: they are the kernel's page cache, reclaimable under
    /// pressure (a container's limit included) and shared with other replicas, and the store keeps
    /// its most recent images mapped whether a decoder holds them or not (`ImageStore`'s loaded
    /// images) — counting them made windows give way to files and players wait (issue 37's
    /// playback regression: 99.90% of frames served without waiting fell to 27.65%).
    static func residentBytes(of image: AnimatedImage, mappingBytes: Int) -> Int {
        let file = image.bytes.storage == .external ? mappingBytes : image.bytes.count
        return file + indexOverheadBytes + image.frameCount * perFrameIndexBytes
    }

    /// What one mapped file held by a decoder counts against a budget of `budget` bytes: a page
    /// (what a mapping keeps resident once read), and at least `budget / maxMappedFiles`, so that
    /// the budget bounds the mappings the cache's decoders hold to ``maxMappedFiles`` whatever
    /// its size.
    static func mappingBytes(budget: Int) -> Int { max(4096, budget / maxMappedFiles) }

    /// The most files the cache's decoders keep mapped: a quarter of the kernel's default
    /// `vm.max_map_count` (65,530), which the allocator and the store's loaded images share.
    static let maxMappedFiles = 16_384

    /// An image's index beside its file: the fixed part and each frame's (descriptor, timestamp,
    /// dependencies). An estimate from the types' sizes, not measured by a test.
    static let indexOverheadBytes = 1024
    static let perFrameIndexBytes = 160
}
