extension SettingKeys {
    /// `auth.*`, `ui.*`, `log.*`, `sources.*`, `security.*` and `uploads.*`: tokens, the pages, logging,
    /// images by URL, signed URLs and upload sessions.
    static let service: [Key] = [
        Key(
            name: "auth.adminToken", kind: .string(\.auth.adminToken),
            summary: "`Authorization: Bearer …` for `DELETE /images/{id}` and `/admin/*`; empty = those answer 403",
            isSecret: true),
        Key(
            name: "auth.uploadToken", kind: .string(\.auth.uploadToken),
            summary: """
                when set, uploads, upload sessions and refreshes of images registered by URL need it as \
                `Authorization: Bearer …`; empty = anyone may upload
                """,
            isSecret: true),
        Key(
            name: "ui.dir", kind: .string(\.ui.dir),
            summary: """
                the files of the pages and the player component, read once at start-up (the container has them in \
                `/app/web`); empty = no pages
                """),
        Key(name: "log.level", kind: .string(\.log.level), summary: "trace, debug, info, notice, warning, error, critical"),
        Key(name: "log.format", kind: .string(\.log.format), summary: "`text` or `json` (one object per line on standard error)"),
        Key(
            name: "log.accessLog", kind: .bool(\.log.accessLog),
            summary: """
                one line per response: method, path, status, bytes, ms, client, request id (in `log.format`); \
                formatted into per-event-loop memory and written by a background thread in large writes (every 64 \
                KiB or 100 ms, and everything on a graceful stop); if the writer falls behind, lines are dropped and \
                counted (`/stats` `accessLog.linesDropped`, `flipbook_access_log_dropped_lines_total`), never waited \
                for
                """),
        Key(
            name: "log.accessLogFile", kind: .string(\.log.accessLogFile),
            summary: "empty = standard error; a path = that file (appended to, reopened on `SIGHUP` for logrotate)"),
        Key(
            name: "sources.allowedPrefixes", kind: .strings(\.sources.allowedPrefixes),
            summary: """
                URL prefixes a source must match, by parts (scheme, host and port equal; path at a segment \
                boundary); empty = any host
                """),
        Key(
            name: "sources.allowedNetworks", kind: .strings(\.sources.allowedNetworks),
            summary: """
                CIDR blocks whose non-public addresses may be fetched anyway (development, tests); empty = public \
                addresses only
                """),
        Key(
            name: "sources.maxRedirects", kind: .int(\.sources.maxRedirects),
            summary: "redirects followed, each target checked like the first URL"),
        Key(
            name: "sources.maxBytes", kind: .int(\.sources.maxBytes),
            summary: "the largest source body, enforced as it arrives; 0 = `limits.maxFileBytes`"),
        Key(
            name: "sources.timeoutSeconds", kind: .double(\.sources.timeoutSeconds),
            summary: "the whole fetch, redirects and name lookups included; beyond → 504"),
        Key(
            name: "sources.refreshSeconds", kind: .double(\.sources.refreshSeconds),
            summary: """
                revalidate a source this long after its fetch, in the background when its metadata is asked for; 0 = \
                only `POST /images/{id}/refresh`
                """),
        Key(
            name: "security.urlKeys", kind: .strings(\.security.urlKeys),
            summary: """
                `KEY:SALT` pairs in hex (`FLIPBOOK_SECURITY_URLKEYS=k1:s1,k2:s2`); the first signs, any verifies; \
                empty = no signatures
                """,
            isSecret: true),
        Key(
            name: "security.signedRoutes", kind: .strings(\.security.signedRoutes),
            summary: """
                which requests need `sig` when keys are set: `renditions` (frame and metadata requests with `width`, \
                `height`, `dpr`, `fit`, `enlarge`, `format` or `quality`; `r=` alone is a preset and is not signed), \
                `frames` (all), `metadata` (all), `previews`, `storyboards`, `sources` (registration by URL, \
                refresh), `uploads` (all)
                """),
        Key(
            name: "uploads.maxSessions", kind: .int(\.uploads.maxSessions),
            summary: "upload sessions created or receiving at once; `POST /uploads` beyond → 429"),
        Key(
            name: "uploads.startSeconds", kind: .double(\.uploads.startSeconds),
            summary: "a session with no `PUT` this long after it was created expires"),
        Key(
            name: "uploads.maxWaitSeconds", kind: .double(\.uploads.maxWaitSeconds),
            summary: "the longest a frame request of a session waits for its bytes (`Prefer: wait=N` is capped by it)"),
        Key(
            name: "uploads.aliasSeconds", kind: .double(\.uploads.aliasSeconds),
            summary: "how long a finished session answers 303 (or the problem that ended it)"),
        Key(
            name: "uploads.key", kind: .string(\.uploads.key),
            summary: """
                hex key (≥ 16 bytes) that signs upload ids; the same on every replica so a session lives where its \
                id is routed; empty = a random key per process (one replica)
                """,
            isSecret: true),
    ]
}
