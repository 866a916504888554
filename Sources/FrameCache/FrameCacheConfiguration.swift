import AnimatedImage
import SystemResources

/// The settings of a ``FrameCache``.
public struct FrameCacheConfiguration: Sendable {
    /// Bytes the cache may hold: encoded frames plus decoder canvases and checkpoints.
    public var budgetBytes: Int
    /// Background decode threads (default: one per CPU the process may use, ``CPULimit/usableCores``).
    public var decodeThreads: Int
    public var window: WindowPolicy
    public var pressure: PressureSchedule
    /// Canvas checkpoint spacing for random access (see `FrameRenderer`).
    public var checkpointInterval: Int
    /// Deflate level of the PNGs the cache makes (libdeflate, on zlib's 0–9 scale).
    public var pngCompressionLevel: Int
    /// Requests that may wait for a decode at once; beyond it a request is refused with
    /// ``FrameCacheError/queueFull(retryAfterSeconds:)``.
    public var maxWaitingRequests: Int
    /// An image counts as active (shares the budget, gets decode-ahead) this long after its
    /// last request.
    public var activeImageSeconds: Double
    /// How many threads answer hits through ``FrameCache/cachedFrame(id:index:reader:)``, each
    /// with a table of its own (the HTTP server's event loops; default one).
    public var hitTables: Int = 1
    /// Keep frames' PNGs in a memory file (``FrameArena``), from which the HTTP server sends them
    /// with `sendfile(2)`; false keeps them on the heap (sent with `sendmsg`). Where no memory file
    /// can be made, frames stay on the heap either way.
    public var frameArena: Bool = true
    /// The decode-memory budget every render and encode reserves from before it starts
    /// (shared with upload verification); nil: decoding memory is not bounded.
    public var decodeBudget: DecodeMemoryBudget? = nil
    /// Renditions of one image other than the full-size PNG that get windows and decode-ahead
    /// at once: the most recently used of those being played (their playhead moved). The rest
    /// are made on demand and are the first to go when room is needed.
    public var decodeAheadRenditions: Int = 4
    /// Threads at most that encode one composite for its renditions at once (the decode thread
    /// that made it and helpers at the same priority; default: the CPUs the process may use).
    /// One image has one decoder, so without this every rendition of a frame is scaled and
    /// encoded on one thread: ten players of one image could use one core.
    public var encodeThreadsPerFrame: Int = CPULimit.usableCores
    /// How a composited frame becomes the bytes of its rendition; the PNG encoder's level is
    /// ``pngCompressionLevel``.
    public var webpEncoder = WebPEncoder()

    public init(
        budgetBytes: Int = MemoryLimits.detect().defaultCacheBudget,
        decodeThreads: Int = CPULimit.usableCores,
        window: WindowPolicy = WindowPolicy(),
        pressure: PressureSchedule = PressureSchedule(),
        checkpointInterval: Int = 16,
        pngCompressionLevel: Int = 1,
        maxWaitingRequests: Int = 4096,
        activeImageSeconds: Double = 30
    ) {
        self.budgetBytes = max(0, budgetBytes)
        self.decodeThreads = max(1, decodeThreads)
        self.window = window
        self.pressure = pressure
        self.checkpointInterval = max(1, checkpointInterval)
        self.pngCompressionLevel = pngCompressionLevel
        self.maxWaitingRequests = max(1, maxWaitingRequests)
        self.activeImageSeconds = activeImageSeconds
    }
}
