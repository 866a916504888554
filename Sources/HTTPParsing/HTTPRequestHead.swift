/// How the body of a request is delimited (RFC 9112 §6).
public enum HTTPBodyFraming: Hashable, Sendable {
    /// No body (no `Content-Length` and no `Transfer-Encoding`, or `Content-Length: 0`).
    case none
    /// Exactly this many bytes follow the head.
    case contentLength(Int)
    /// A `Transfer-Encoding: chunked` body of unknown length.
    case chunked
}

/// The parsed head of one request: request line, header fields, and what they imply for framing
/// and the connection. Produced by `HTTPRequestParser`; the server turns it into an `HTTPRequest`.
public struct HTTPRequestHead: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The request target exactly as sent (origin-form `/path?query`, `*`, or absolute-form): a
    /// `String` made when read (the server reads ``rawTarget``).
    public var target: String { rawTarget.target }
    /// The target as bytes of the head, split into its path and query.
    @usableFromInline
    package var rawTarget: RawTarget
    /// The protocol version.
    public var version: HTTPVersion
    /// The header fields, in order, duplicates preserved.
    public var headers: HTTPHeaders
    /// How the body is delimited.
    public var framing: HTTPBodyFraming
    /// Whether the connection may stay open after this exchange, per version and `Connection`.
    public var keepAlive: Bool
    /// Whether the client sent `Expect: 100-continue` (HTTP/1.1 only) and waits before sending the body.
    public var expectsContinue: Bool

    /// A head from its parts (the parser's, or a request's made by hand).
    package init(
        method: HTTPMethod, rawTarget: RawTarget, version: HTTPVersion, headers: HTTPHeaders,
        framing: HTTPBodyFraming, keepAlive: Bool, expectsContinue: Bool
    ) {
        self.method = method
        self.rawTarget = rawTarget
        self.version = version
        self.headers = headers
        self.framing = framing
        self.keepAlive = keepAlive
        self.expectsContinue = expectsContinue
    }
}
