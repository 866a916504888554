import FoundationEssentials

/// A snapshot of the cache for `GET /stats`: budget, bytes, entries, windows, hit/miss counts,
/// pressure and purge history.
public struct CacheStats: Sendable, Codable {
    public var budgetBytes: Int
    /// Set aside from the budget for the decode threads' working memory (a few canvases each).
    public var workingReserveBytes: Int
    /// Everything counted against the budget: `frameBytes`, `decoderBytes`, `entryBytes` and
    /// `stagedBytes`.
    public var usedBytes: Int
    public var frameBytes: Int
    /// Decoders: their canvases and checkpoints, and the image each holds (its file — whole pages
    /// when mapped — and its index).
    public var decoderBytes: Int
    /// The entries themselves, whatever they hold: about 2 KiB each (the entry, its image's
    /// record, its places in the cache's maps and hit tables).
    public var entryBytes: Int
    public var entries: Int
    public var cachedFrames: Int
    public var hits: Int
    public var misses: Int
    /// Requests that waited for a decode.
    public var waits: Int
    /// Requests that joined a decode another request had already asked for.
    public var coalesced: Int
    /// Frames made (rendered and encoded), for waiting requests or ahead of them.
    public var decodes: Int
    public var prefetches: Int
    /// Frame decodes the renderers did to make them, counting frames replayed to reach a target
    /// (equal to `decodes` when every frame is made in order).
    public var framesDecoded: Int
    /// Renders that restored their canvas from a cached frame's PNG instead of replaying.
    public var resumes: Int
    /// Frames made but not kept: no room without evicting what others are about to need.
    public var notKept: Int
    public var evictions: Int
    public var refusedQueueFull: Int
    /// Frames of uploads in progress held now, and their bytes (part of `usedBytes`, not of
    /// `frameBytes`).
    public var stagedFrames: Int
    public var stagedBytes: Int
    /// Frames made during an upload that became the stored image's frames (no decode of their own).
    public var adopted: Int
    /// Requests waiting for a decode now.
    public var queueDepth: Int
    public var decodeThreads: Int
    /// The decode-memory budget the decode threads reserve from (shared with upload
    /// verification); nil when decoding memory is not bounded.
    public var decodeMemory: DecodeMemoryBudget.Stats?
    public var pressure: Pressure
    public var purges: [PurgeRecord]
    /// The renditions held (every scaled or WebP version of an image is one, the full-size PNG
    /// too).
    public var renditions: Renditions
    /// The most recently used entries first, at most the number asked for
    /// (``FrameCache/stats(listing:)``; `/stats`: ``listedImages``).
    public var images: [Image]

    /// The entries `/stats` lists: the most recently used thousand (``entries`` counts them all;
    /// `GET /images/{id}/cache` tells one image's).
    public static let listedImages = 1000

    /// How the cache's entries split into renditions decoded ahead and made on demand.
    public struct Renditions: Sendable, Codable {
        /// Entries held, every rendition of every image.
        public var entries: Int
        /// Renditions other than the full-size PNG with decode-ahead windows now.
        public var decodeAhead: Int
        /// Renditions made only when asked for (beyond ``FrameCacheConfiguration/decodeAheadRenditions``
        /// per image, or not played).
        public var onDemand: Int
        /// Frames encoded for a rendition from a canvas composited for another (decoded once).
        public var sharedRenders: Int
        /// One-off requests made beside their image's decoder while a thread held it, on a
        /// decoder of their own.
        public var madeBeside: Int
        /// Renditions dropped to keep an image within its most renditions held.
        public var replaced: Int
    }

    /// The memory-pressure state.
    public struct Pressure: Sendable, Codable {
        public var level: PressureLevel
        public var windowCap: Int?
        public var onDemand: Bool
    }

    /// One rendition's share of the cache (an image's full-size PNG frames are one).
    public struct Image: Sendable, Codable {
        public var id: String
        /// `full` for the full-size PNG, else the rendition's key (``FrameRendition/key``).
        public var rendition: String
        public var frameCount: Int
        public var cachedFrames: Int
        public var window: Int
        /// The window holds the whole animation (it fits in the budget).
        public var whole: Bool
        public var playhead: Int
        public var frameBytes: Int
        public var decoderBytes: Int
        public var loaded: Bool
        public var waiting: Int
        public var idleSeconds: Double
    }
}

/// One purge in the history: when, why, and how much it freed.
public struct PurgeRecord: Sendable, Codable {
    public var at: Date
    public var level: PressureLevel
    /// Who raised it: `admin`, `signal`, `cgroup`, ….
    public var source: String
    public var freedBytes: Int
    public var bytesAfter: Int
}
