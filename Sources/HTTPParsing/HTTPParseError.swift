/// Why the request parser rejected a request; each case maps to the status the server answers.
public enum HTTPParseError: Error, Hashable, Sendable, CaseIterable {
    /// The request line is not `method SP request-target SP HTTP-version`.
    case malformedRequestLine
    /// The method is not a token.
    case invalidMethod
    /// The request target has a forbidden byte, a bad percent-escape or an unsupported form.
    case invalidTarget
    /// The request line is longer than the configured limit (414).
    case requestLineTooLong
    /// The version is well-formed but not HTTP/1.x (505).
    case unsupportedVersion
    /// A line ended with a bare CR or LF, or a forbidden control byte appeared.
    case invalidLineEnding
    /// A header field line is malformed (no colon, empty or non-token name, whitespace before the colon, bad value byte).
    case invalidHeaderField
    /// A header line started with whitespace (obsolete line folding, rejected by RFC 9112 §5.2).
    case obsoleteLineFolding
    /// The header section is larger than allowed, in bytes or in fields (431).
    case headerSectionTooLarge
    /// `Content-Length` is not a decimal number, overflows, or appears twice with different values.
    case invalidContentLength
    /// Both `Content-Length` and `Transfer-Encoding` were sent (a request smuggling vector).
    case contentLengthWithTransferEncoding
    /// `Transfer-Encoding` names a coding other than a single final `chunked` (501).
    case unsupportedTransferEncoding
    /// `Transfer-Encoding` is malformed (empty, `chunked` twice or not last, or sent with HTTP/1.0).
    case invalidTransferEncoding
    /// An HTTP/1.1 request without exactly one `Host` header.
    case invalidHost
    /// A chunk size line, chunk terminator or trailer is malformed.
    case invalidChunk
    /// An `Expect` value other than `100-continue` (417).
    case unsupportedExpectation

    /// The HTTP status code the server answers with for this error.
    public var statusCode: Int {
        switch self {
        case .requestLineTooLong: return 414
        case .unsupportedVersion: return 505
        case .headerSectionTooLarge: return 431
        case .unsupportedTransferEncoding: return 501
        case .unsupportedExpectation: return 417
        default: return 400
        }
    }

    /// A one-sentence explanation for the `detail` member of the problem document.
    public var detail: String {
        switch self {
        case .malformedRequestLine: return "The request line is malformed."
        case .invalidMethod: return "The request method is not a valid token."
        case .invalidTarget: return "The request target is malformed."
        case .requestLineTooLong: return "The request line is longer than the server accepts."
        case .unsupportedVersion: return "Only HTTP/1.0 and HTTP/1.1 are supported."
        case .invalidLineEnding: return "A line of the request is not terminated by CRLF or holds a control character."
        case .invalidHeaderField: return "A header field is malformed."
        case .obsoleteLineFolding: return "Obsolete header line folding is not accepted."
        case .headerSectionTooLarge: return "The header section is larger than the server accepts."
        case .invalidContentLength: return "The Content-Length header is invalid."
        case .contentLengthWithTransferEncoding: return "A request must not carry both Content-Length and Transfer-Encoding."
        case .unsupportedTransferEncoding: return "Only the chunked transfer coding is supported."
        case .invalidTransferEncoding: return "The Transfer-Encoding header is invalid."
        case .invalidHost: return "An HTTP/1.1 request must carry exactly one Host header."
        case .invalidChunk: return "The chunked request body is malformed."
        case .unsupportedExpectation: return "Only the 100-continue expectation is supported."
        }
    }
}
