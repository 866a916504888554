/// What a handler returns: the response right away, or a promise to call its responder later.
public enum HTTPHandlerResult: Sendable {
    /// Send this response. The hot path: no task, no thread hop, no extra allocation.
    case now(HTTPResponse)
    /// The handler (or something it started) will call `HTTPResponder.respond(_:)` exactly once,
    /// from any thread. Until then the connection waits; later pipelined responses queue behind it.
    case later
}

/// A one-shot, thread-safe way to answer a request after the handler has returned `.later`.
///
/// `respond(_:)` may be called from any thread (a decode queue, a `Task`); the response is handed
/// to the connection's event loop through its wake-up descriptor and written in request order.
/// Only the first call for a request counts; later calls, and calls after the connection closed,
/// are ignored. Forgetting to call it leaves the client waiting until it gives up.
public struct HTTPResponder: Sendable {
    enum Target: Sendable {
        case loop(EventLoop, ResponseToken)
        case callback(@Sendable (HTTPResponse) -> Void)
    }

    let target: Target

    init(loop: EventLoop, token: ResponseToken) {
        target = .loop(loop, token)
    }

    /// A responder that passes the response to `deliver`, to test handlers without a server.
    public init(_ deliver: @escaping @Sendable (HTTPResponse) -> Void) {
        target = .callback(deliver)
    }

    /// Sends `response` as the answer to the request this responder belongs to.
    public func respond(_ response: HTTPResponse) {
        switch target {
        case .loop(let loop, let token): loop.deliver(response, to: token)
        case .callback(let deliver): deliver(response)
        }
    }
}

/// Identifies a pending response across threads: connection slot, its generation, request number.
struct ResponseToken: Sendable {
    var fd: Int32
    var generation: UInt32
    var sequence: UInt64
}
