extension SettingKeys {
    /// `storage.*`: where images live, on the file system or in an S3-compatible bucket.
    static let storage: [Key] = [
        Key(
            name: "storage.backend", kind: .string(\.storage.backend),
            summary: """
                `fs`: images in `storage.dataDir`, which replicas may share; `s3`: originals and records in an \
                S3-compatible bucket, `storage.dataDir` holding only uploads in progress and the local cache of \
                originals (docs/storage.md)
                """),
        Key(
            name: "storage.dataDir", kind: .string(\.storage.dataDir),
            summary: """
                uploads and their metadata (`fs`; several replicas may share it), or the local upload and cache \
                directory (`s3`)
                """),
        Key(
            name: "storage.libraryDirs", kind: .strings(\.storage.libraryDirs),
            summary: "read-only directories whose GIF/PNG/WebP files are registered by file name"),
        Key(name: "storage.maxPageSize", kind: .int(\.storage.maxPageSize), summary: "the largest `limit` of `GET /images`"),
        Key(
            name: "storage.recheckSeconds", kind: .double(\.storage.recheckSeconds),
            summary: """
                how long a record is trusted before storage is asked again: another replica's replace or delete is \
                seen within it
                """),
        Key(
            name: "storage.recordCacheBytes", kind: .int(\.storage.recordCacheBytes),
            summary: """
                the most memory the image records kept in memory take (32 MiB: about 14,000 records of small \
                animations, 2.4 KB each, or a hundred of thousand-frame ones; a record's estimate is its metadata \
                document plus its frame table, strings and table slots, measured against RSS); the least recently \
                used go first and are read from storage again when next needed; `0` keeps none. Counted in \
                `/stats` (`records`: `entries`, `bytes`, `maxBytes`, `hits`, `misses`, `evictions`) and \
                `/metrics` (`flipbook_record_cache_*`); listing pages read no records on `fs` (the listing \
                index holds what an entry shows) and read them without keeping them on `s3`
                """),
        Key(
            name: "storage.s3.endpoint", kind: .string(\.storage.s3.endpoint),
            summary: "`http(s)://host[:port]` of the S3 server; empty = AWS, `https://s3.<region>.amazonaws.com`"),
        Key(
            name: "storage.s3.region", kind: .string(\.storage.s3.region),
            summary: "the bucket's region (signed into every request)"),
        Key(
            name: "storage.s3.bucket", kind: .string(\.storage.s3.bucket),
            summary: """
                the bucket the objects go to: `<prefix>originals/…`, `<prefix>meta/…`, `<prefix>names/…`, \
                `<prefix>refs/…`
                """),
        Key(
            name: "storage.s3.prefix", kind: .string(\.storage.s3.prefix),
            summary: "put before every object key (e.g. `flipbook/`); may be empty"),
        Key(
            name: "storage.s3.pathStyle", kind: .bool(\.storage.s3.pathStyle),
            summary: """
                `endpoint/bucket/key` URLs (most self-hosted servers: SeaweedFS, Garage, Ceph RGW) instead of \
                `bucket.endpoint/key`
                """),
        Key(
            name: "storage.s3.requestTimeoutSeconds", kind: .double(\.storage.s3.requestTimeoutSeconds),
            summary: "the longest wait for an answer, per attempt"),
        Key(
            name: "storage.s3.retries", kind: .int(\.storage.s3.retries),
            summary: "retries after network errors, 5xx and throttling, with exponential backoff and full jitter"),
        Key(
            name: "storage.s3.accessKeyId", kind: .string(\.storage.s3.accessKeyId),
            summary: "the access key; when empty, `AWS_ACCESS_KEY_ID`",
            isSecret: true),
        Key(
            name: "storage.s3.secretAccessKey", kind: .string(\.storage.s3.secretAccessKey),
            summary: "the secret key; when empty, `AWS_SECRET_ACCESS_KEY`",
            isSecret: true),
        Key(
            name: "storage.s3.sessionToken", kind: .string(\.storage.s3.sessionToken),
            summary: "a session token; when empty, `AWS_SESSION_TOKEN`",
            isSecret: true),
        Key(
            name: "storage.s3.localCacheBytes", kind: .int(\.storage.s3.localCacheBytes),
            summary: "the local disk cache of originals, least recently used removed first"),
        Key(
            name: "storage.s3.multipartThresholdBytes", kind: .int(\.storage.s3.multipartThresholdBytes),
            summary: "uploads larger than this go up in parts"),
        Key(
            name: "storage.s3.partBytes", kind: .int(\.storage.s3.partBytes),
            summary: "the size of each part of a multipart upload"),
    ]
}
