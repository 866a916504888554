/// An error a handler or body sink throws to answer with a given status as a problem document.
public struct HTTPError: Error, Sendable {
    /// The status to answer with.
    public var status: HTTPStatus
    /// The `detail` of the problem document.
    public var detail: String
    /// Extra header fields of the answer (e.g. `WWW-Authenticate` on a 401).
    public var headers: HTTPHeaders

    /// An error with a status, a human-readable detail and optional extra header fields.
    public init(_ status: HTTPStatus, detail: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.detail = detail
        self.headers = headers
    }

    /// The 413 for a request body over `maxBytes`, as the server answers it.
    public static func tooLarge(maxBytes: Int) -> HTTPError {
        HTTPError(.contentTooLarge, detail: "The request body is larger than the \(maxBytes) bytes this resource accepts.")
    }
}

/// Why a streamed request body did not arrive completely.
public enum HTTPBodyFailure: Error, Sendable, Hashable {
    /// The body exceeded the route's limit (the server answered 413).
    case tooLarge
    /// The chunked framing was malformed (the server answered 400).
    case malformed
    /// The body made no progress within the body idle timeout (the server answered 408).
    case timedOut
    /// The connection closed or failed before the body ended.
    case connectionClosed
    /// The sink's own `write` threw.
    case sinkFailed
}

/// Receives a streamed request body chunk by chunk, for routes registered with `Router.stream`.
///
/// A new sink is made for each request by the route's factory. All calls happen on the
/// connection's event-loop thread, one at a time, so keep them short (a `write(2)` to a file and
/// a hash update are fine; anything slower should be handed off). Exactly one of `finish()` and
/// `fail(_:)` ends the sink's life.
public protocol HTTPBodySink: AnyObject {
    /// The next bytes of the body, valid only during the call. Throw `HTTPError` to reject the
    /// request with that status (the connection is then closed); any other error answers 500.
    func write(_ chunk: UnsafeRawBufferPointer) throws
    /// The body is complete: answer at once with `.now`, or `.later` through the responder the
    /// factory was given.
    func finish() -> HTTPHandlerResult
    /// The body will not complete; the server has answered or closed by itself. Clean up.
    func fail(_ reason: HTTPBodyFailure)
}
