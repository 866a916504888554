/// The bucket of `storage.backend = s3`: where it is, how requests to it are made, and the local
/// cache of originals beside it (`storage.s3.*` in the settings).
public struct S3StorageSettings: Sendable, Equatable {
    /// `http(s)://host[:port]`; empty = AWS's regional endpoint, `https://s3.<region>.amazonaws.com`.
    public var endpoint = ""
    public var region = "us-east-1"
    public var bucket = ""
    /// Put before every key (e.g. `flipbook/`); may be empty.
    public var prefix = ""
    /// Path-style URLs (`endpoint/bucket/key`), as most self-hosted servers want; false =
    /// virtual-hosted (`bucket.endpoint/key`), as AWS prefers.
    public var pathStyle = false
    /// Longest wait for any byte of a response (each attempt).
    public var requestTimeoutSeconds = 10.0
    /// Retries after a failed attempt (network error, 5xx, throttling), with exponential
    /// backoff and full jitter.
    public var retries = 3
    /// Credentials; empty = `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`.
    public var accessKeyId = ""
    public var secretAccessKey = ""
    public var sessionToken = ""
    /// The local cache of originals (least recently used removed first), in bytes.
    public var localCacheBytes = 4 << 30
    /// Uploads larger than this go up in parts (multipart upload).
    public var multipartThresholdBytes = 64 << 20
    /// The size of each part (S3's minimum is 5 MiB).
    public var partBytes = 16 << 20
    public init() {}
}
