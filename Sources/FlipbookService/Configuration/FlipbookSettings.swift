import AnimatedImage
import FrameCache
import ImageStorage

/// Every setting of `flipbook serve`, with its default. `Config/flipbook.json` mirrors these
/// defaults key for key (a test keeps the two equal); see ``SettingsLoader`` for the order in
/// which the file, the environment and command-line flags override them.
public struct FlipbookSettings: Sendable, Equatable {
    /// Listening socket, connections, HTTP limits and timeouts, proxy awareness.
    public struct Server: Sendable, Equatable {
        public var host = "0.0.0.0"
        public var port = 8080
        /// Event-loop threads; 0 = one per CPU the process may use (`CPULimit.usableCores`).
        public var eventLoopThreads = 0
        public var maxConnections = 10_000
        public var maxRequestLineBytes = 8 * 1024
        public var maxHeaderBytes = 16 * 1024
        public var maxHeaderFields = 100
        /// The largest upload accepted (413 beyond it); matches `limits.maxFileBytes` by default.
        public var maxUploadBytes = 256 * 1024 * 1024
        public var headerTimeoutSeconds = 10.0
        public var bodyIdleTimeoutSeconds = 30.0
        public var keepAliveTimeoutSeconds = 60.0
        public var drainTimeoutSeconds = 20.0
        /// Put in `X-Served-By` on every response; empty = the host name.
        public var instanceName = ""
        /// Peers whose `X-Forwarded-For` is believed (IP addresses or CIDR blocks).
        public var trustedProxies: [String] = []
        /// Web origins whose pages may call the API (CORS): `https://example.com`, or `*` for
        /// any; empty = no CORS headers at all.
        public var corsOrigins: [String] = []
        public init() {}
    }

    /// Where images live.
    public struct Storage: Sendable, Equatable {
        /// `fs`: uploads in `dataDir`, which replicas share; `s3`: originals and records in an
        /// S3-compatible bucket, `dataDir` holding uploads in progress and the local cache of
        /// originals.
        public var backend = "fs"
        /// Uploaded images and their metadata (fs), or the local upload and cache directory (s3).
        public var dataDir = "data"
        /// Read-only directories whose GIF/PNG/WebP files are registered by file name.
        public var libraryDirs: [String] = ["Samples"]
        /// The largest page `GET /images` returns.
        public var maxPageSize = 1000
        /// How long a record is trusted before storage is asked again: another replica's replace
        /// or delete is seen within it.
        public var recheckSeconds = 1.0
        /// The most memory the records kept in memory take (estimated; the least recently used
        /// go first, and are read from storage again when needed).
        public var recordCacheBytes = ImageStore.defaultRecordCacheBytes
        public var s3 = S3()
        public init() {}
    }

    /// The bucket of `storage.backend = s3` (ImageStorage's settings of it).
    public typealias S3 = S3StorageSettings

    /// The shared frame cache.
    public struct Cache: Sendable, Equatable {
        /// The byte budget; 0 = `memoryFraction` of the memory limit, capped at 60% of what is
        /// available (the SDWebImage rule).
        public var maxBytes = 0
        public var memoryFraction = 0.2
        /// Background decode threads; 0 = one per CPU the process may use (`CPULimit.usableCores`).
        public var decodeThreads = 0
        /// How many frames of each image are kept and decoded ahead (`cache.wholeAnimationBytes`,
        /// `cache.minimumWindow`, `cache.lookaheadMs`): the frame cache's own policy type.
        public var window = WindowPolicy()
        /// Deflate level of served PNGs (libdeflate, on zlib's scale: 1 = fast, 9 = small).
        public var pngCompressionLevel = 1
        /// Canvas checkpoint spacing: frame k from cold costs at most this many frame decodes.
        public var checkpointInterval = 16
        /// Requests that may wait for decodes at once; beyond it → 429 with `Retry-After`.
        public var maxWaitingRequests = 4096
        /// A warning is raised when the cgroup's working set (usage less inactive page cache)
        /// passes this share of its memory limit (v2 `memory.max`, v1 `memory.limit_in_bytes`).
        public var pressureWarningFraction = 0.85
        /// … and critical above this share.
        public var pressureCriticalFraction = 0.95
        /// How often the cgroup's memory files are read.
        public var pressurePollSeconds = 1.0
        /// Keep cached frames in a memory file and send them with `sendfile(2)` (no copy into the
        /// socket); false keeps them on the heap and copies them in with `sendmsg`.
        public var frameArena = true
        public init() {}
    }

    /// What an image may cost, checked when it is indexed, before any pixel is decoded.
    public struct Limits: Sendable, Equatable {
        /// The decoding core's limits as configured (`limits.maxFileBytes`, `limits.maxFramePixels`,
        /// `limits.maxFrames`, `limits.maxTotalPixels`, `limits.maxDecodeBytes`; the longest side
        /// keeps its default). Its `maxDecodeBytes` is the decode-memory budget: what decodes and
        /// upload verifications may hold at once besides the cache (each reserves its share before
        /// it allocates, and waits when the budget is spent); an image one decode of which would
        /// need more is refused with 422. Here 0 = 25% of the memory limit, capped at 60% of what
        /// is available (at least 64 MiB): ``decodeLimits(decodeBudget:)`` puts the budget's
        /// actual size in its place.
        public var decode = DecodeLimits(maxDecodeBytes: 0)
        /// The largest rendition served, in pixels on a side: a requested `width × dpr` or
        /// `height × dpr` above it is refused (400).
        public var maxOutputDimension = 4096
        /// AVIF frames (`format=avif` on the frame routes) one client may have being made at
        /// once (an AVIF frame costs about 17× a WebP frame's CPU); beyond it → 429 with
        /// `Retry-After`. 0 = no limit.
        public var avifFramesPerClient = 2
        public init() {}

        /// The decode-memory budget in bytes: `decode.maxDecodeBytes`, or its default from `memory`.
        public func decodeBudgetBytes(_ memory: MemoryLimits) -> Int {
            decode.maxDecodeBytes > 0 ? decode.maxDecodeBytes : memory.decodeBudget
        }

        /// The decoding core's view of these limits, with `decodeBudget` as the most memory one
        /// decode may need.
        public func decodeLimits(decodeBudget: Int) -> DecodeLimits {
            var limits = decode
            limits.maxDecodeBytes = decodeBudget
            return limits
        }
    }

    /// Scaled and WebP frames (`?width=&height=&fit=&dpr=&enlarge=&format=&quality=&r=`).
    public struct Renditions: Sendable, Equatable {
        /// The format of frames whose request names none: `png` (today's frames, byte for byte),
        /// `webp`, or `auto` (WebP when `Accept` lists `image/webp`, else PNG; `Vary: Accept`).
        public var defaultFormat = "png"
        /// Renditions by name, as `NAME:QUERY` (`thumb:width=160&format=webp&quality=75`),
        /// asked for with `?r=NAME`.
        public var presets: [String] = []
        /// false: only presets are served (`?r=`); any other rendition parameter is refused
        /// (400). For public deployments, so clients cannot ask for every size.
        public var allowArbitrary = true
        /// Renditions of one image (besides the full-size PNG) decoded ahead at once: the most
        /// recently used of those being played; the others are made on demand.
        public var decodeAheadPerImage = 4
        public init() {}
    }

    /// Storyboards and animated previews (`GET /images/{id}/storyboard…`, `…/preview`): made
    /// once, kept on disk, least recently used removed first.
    public struct Derived: Sendable, Equatable {
        /// The most bytes kept products may take on disk (least recently used removed first).
        public var maxBytes = 1 << 30
        /// A request waits this long for its product to be made; then 503 + `Retry-After`
        /// while the build goes on.
        public var maxWaitSeconds = 10.0
        /// The largest product (a preview, or a storyboard's sheets together); larger → 422.
        public var maxOutputBytes = 64 << 20
        /// The most pixels of one storyboard sheet (and never more than 16383 px on a side).
        public var maxSheetPixels = 16_777_216
        public init() {}
    }

    /// Bearer tokens; an empty token disables what it guards (admin routes) or its check (uploads).
    public struct Auth: Sendable, Equatable {
        /// Needed for `DELETE /images/{id}` and `/admin/*`; empty = those routes answer 403.
        public var adminToken = ""
        /// Needed for uploads when set; empty = anyone may upload.
        public var uploadToken = ""
        public init() {}
    }

    /// The browser pages (`/`, `/player/{id}`) and the `<flipbook-player>` component (`/ui/…`).
    public struct UI: Sendable, Equatable {
        /// The directory whose files are served under `/ui/` (read once at start-up); empty =
        /// no pages.
        public var dir = "web"
        public init() {}
    }

    /// Images registered by URL (`POST /images` with `{"url": …}`), fetched under these rules.
    public struct Sources: Sendable, Equatable {
        /// URL prefixes a source must match (scheme, host and port equal, path at a segment
        /// boundary); empty = any host.
        public var allowedPrefixes: [String] = []
        /// CIDR blocks whose loopback, private, link-local, … addresses may be fetched anyway
        /// (development and tests); empty = only public addresses.
        public var allowedNetworks: [String] = []
        public var maxRedirects = 3
        /// The largest body fetched; 0 = `limits.maxFileBytes`.
        public var maxBytes = 0
        /// The whole fetch, redirects included.
        public var timeoutSeconds = 10.0
        /// Revalidate a source this long after it was fetched, when its image is asked for;
        /// 0 = only `POST /images/{id}/refresh`.
        public var refreshSeconds = 0.0
        public init() {}
    }

    /// Upload sessions (`POST /uploads`, `PUT /uploads/{uploadId}`): frames served while the
    /// bytes arrive.
    public struct Uploads: Sendable, Equatable {
        /// Sessions created or receiving at once; `POST /uploads` beyond answers 429.
        public var maxSessions = 64
        /// A session with no `PUT` this long after it was created expires.
        public var startSeconds = 60.0
        /// The longest a frame request waits for its bytes (`Prefer: wait=N` is capped by it).
        public var maxWaitSeconds = 10.0
        /// How long a finished session answers 303 (or its failure) before it is forgotten.
        public var aliasSeconds = 3600.0
        /// The key (hex, at least 16 bytes) that signs upload ids, the same on every replica so
        /// a session can live on the replica its id is routed to; empty = a random key of this
        /// process (one replica).
        public var key = ""
        public init() {}
    }

    /// Signed URLs (HMAC-SHA256, imgproxy's scheme in query parameters).
    public struct Security: Sendable, Equatable {
        /// `KEY:SALT` pairs, hexadecimal; the first signs, any verifies. Empty = no signatures.
        public var urlKeys: [String] = []
        /// Which requests must be signed when `urlKeys` is set (see ``SignedRequestPolicy``).
        public var signedRoutes: [String] = ["renditions", "previews", "storyboards", "sources"]
        public init() {}
    }

    /// Logging.
    public struct Log: Sendable, Equatable {
        /// trace, debug, info, notice, warning, error, critical.
        public var level = "info"
        /// `text` or `json` (one JSON object per line).
        public var format = "text"
        /// Log every request (method, path, status, bytes, duration, client, request id).
        public var accessLog = true
        /// Where access-log lines go: empty = standard error; a path = that file, reopened on
        /// SIGHUP (for logrotate).
        public var accessLogFile = ""
        public init() {}
    }

    public var server = Server()
    public var storage = Storage()
    public var cache = Cache()
    public var limits = Limits()
    public var renditions = Renditions()
    public var derived = Derived()
    public var auth = Auth()
    public var ui = UI()
    public var log = Log()
    public var sources = Sources()
    public var security = Security()
    public var uploads = Uploads()

    public init() {}
}
