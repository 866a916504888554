extension SettingKeys {
    /// `cache.*` and `limits.*`: the frame cache's budget and policy, and what an image or a decode may take.
    static let decoding: [Key] = [
        Key(
            name: "cache.maxBytes", kind: .int(\.cache.maxBytes),
            summary: """
                the frame cache's byte budget; 0 = min(`cache.memoryFraction` × the memory limit, 60% of available \
                memory) — the limit is the cgroup's (v2 `memory.max`, v1 `memory.limit_in_bytes`, a parent's when \
                tighter) when set, else physical memory; available = limit − working set
                """),
        Key(
            name: "cache.memoryFraction", kind: .double(\.cache.memoryFraction),
            summary: "the share of the memory limit the frame cache takes when `cache.maxBytes` is 0"),
        Key(
            name: "cache.decodeThreads", kind: .int(\.cache.decodeThreads),
            summary: "background decode threads; 0 = one per CPU the process may use (the cgroup quota and the affinity mask)"),
        Key(
            name: "cache.wholeAnimationBytes", kind: .int(\.cache.window.wholeAnimationBytes),
            summary: """
                animations whose decoded frames fit in this are the first to be cached whole when the budget has \
                room (FLAnimatedImage's rule); after them, the animations that save the most decoding per byte
                """),
        Key(
            name: "cache.minimumWindow", kind: .int(\.cache.window.minimumWindow),
            summary: "the smallest decode-ahead window outside memory pressure"),
        Key(
            name: "cache.lookaheadMs", kind: .int(\.cache.window.lookaheadMs),
            summary: "playback time decoded ahead of every active image's playhead"),
        Key(
            name: "cache.pngCompressionLevel", kind: .int(\.cache.pngCompressionLevel),
            summary: "compression level of served PNGs, on zlib's scale (0 stored, 1 fast … 9 small)"),
        Key(
            name: "cache.checkpointInterval", kind: .int(\.cache.checkpointInterval),
            summary: """
                once a decoder has played past frame k, frame k costs at most this many frame decodes (from cold, a \
                frame replays from the nearest independent frame or seek anchor)
                """),
        Key(
            name: "cache.maxWaitingRequests", kind: .int(\.cache.maxWaitingRequests),
            summary: "requests waiting for decodes at once; beyond → 429 + `Retry-After`"),
        Key(
            name: "cache.pressureWarningFraction", kind: .double(\.cache.pressureWarningFraction),
            summary: """
                the cgroup's working set (usage less inactive page cache: v2 `memory.current`, v1 \
                `memory.usage_in_bytes`, less `memory.stat`'s inactive file pages) over its limit that raises a \
                memory-pressure warning
                """),
        Key(
            name: "cache.pressureCriticalFraction", kind: .double(\.cache.pressureCriticalFraction),
            summary: "the cgroup's working set over its limit that raises critical memory pressure (as for the warning)"),
        Key(
            name: "cache.pressurePollSeconds", kind: .double(\.cache.pressurePollSeconds),
            summary: "how often the cgroup is read (PSI `memory.pressure` too, where present)"),
        Key(
            name: "cache.frameArena", kind: .bool(\.cache.frameArena),
            summary: """
                keep cached frames in a memory file (`memfd`) and send them with `sendfile(2)`, as nginx sends \
                static files, instead of copying each into the socket; `false` keeps them on the heap \
                (BENCHMARKS.md, \"Sending a cached frame's body\")
                """),
        Key(
            name: "limits.maxFileBytes", kind: .int(\.limits.decode.maxFileBytes),
            summary: "the largest image file, checked before anything is decoded; over → 422 naming the limit"),
        Key(
            name: "limits.maxFramePixels", kind: .int(\.limits.decode.maxFramePixels),
            summary: "the most pixels of the canvas or of a frame"),
        Key(name: "limits.maxFrames", kind: .int(\.limits.decode.maxFrames), summary: "the most frames of an image"),
        Key(
            name: "limits.maxTotalPixels", kind: .int(\.limits.decode.maxTotalPixels),
            summary: "the most pixels summed over all frames"),
        Key(
            name: "limits.maxDecodeBytes", kind: .int(\.limits.decode.maxDecodeBytes),
            summary: """
                the decode-memory budget: what renders, encodes and upload verifications may hold at once besides \
                the cache, whatever the number of threads; each reserves its share before it allocates (canvas, \
                frame data, libpng/libwebp buffers, PNG output; `DecodeMemory`) and waits, first come first served, \
                while the budget is spent (counted; 429 + `Retry-After` beyond `cache.maxWaitingRequests` waiting); \
                an image one decode of which needs more than the whole budget is refused at upload with 422 naming \
                this limit (a 49 MP frame needs about 790 MB). 0 = min(25% of the memory limit, 60% of available), \
                at least 64 MiB. `/stats` `decodeMemory`, `flipbook_decode_memory_*`
                """),
        Key(
            name: "limits.maxOutputDimension", kind: .int(\.limits.maxOutputDimension),
            summary: """
                the largest rendition side asked for, in device pixels: a `round(width × dpr)` or `round(height × \
                dpr)` above it → 400 naming this limit and its value
                """),
        Key(
            name: "limits.avifFramesPerClient", kind: .int(\.limits.avifFramesPerClient),
            summary: """
                AVIF frames (`format=avif` on the frame routes, an upload session's included) one client (its \
                address, or its `X-Forwarded-For` hop behind `server.trustedProxies`) may have being encoded at \
                once; beyond → 429 + `Retry-After` (0 = no limit; cached frames are not counted)
                """),
    ]
}
