/// Size limits the request parser enforces while reading a request head and chunked framing.
public struct HTTPParserLimits: Hashable, Sendable {
    /// The longest request line accepted, CRLF included; longer → 414.
    public var maxRequestLineBytes: Int
    /// The largest header section accepted (all field lines after the request line); larger → 431.
    public var maxHeaderBytes: Int
    /// The most header fields accepted; more → 431.
    public var maxHeaderFields: Int
    /// The longest chunk-size line (size plus extensions) accepted; longer → 400.
    public var maxChunkLineBytes: Int

    /// Limits with the defaults of `HTTPServerConfiguration`: 8 KiB line, 16 KiB / 100 fields, 4 KiB chunk line.
    public init(
        maxRequestLineBytes: Int = 8 * 1024, maxHeaderBytes: Int = 16 * 1024,
        maxHeaderFields: Int = 100, maxChunkLineBytes: Int = 4 * 1024
    ) {
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderFields = maxHeaderFields
        self.maxChunkLineBytes = maxChunkLineBytes
    }
}
