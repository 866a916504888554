/// What a connection keeps about the requests it is answering: one ``Exchange`` per request whose
/// head was parsed (queued in order until its response is written), and how the body of the
/// request being received is handled (``BodyMode``, ``Incoming``).
extension Connection {
    /// A request that has a head and waits for (or has) its response. A value kept in the queue
    /// itself (no allocation per request), changed in place there and taken out of it, not
    /// copied, when its response is written.
    struct Exchange {
        let sequence: UInt64
        let method: HTTPMethod
        /// The target, for its raw (percent-encoded) path; `-` when the request line could not be
        /// parsed.
        let target: RawTarget
        /// The matched route's pattern and position (nil and -1 when none matched).
        let route: String?
        let routeIndex: Int
        let headers: HTTPHeaders
        let requestID: HTTPRequestID
        let isHead: Bool
        let isHTTP10: Bool
        var keepAlive: Bool
        let startNanoseconds: UInt64
        /// The answer, once it came while an earlier request's was still missing.
        var response: HTTPResponse? {
            didSet { isAnswered = response != nil }
        }
        /// Whether ``response`` is set (read without copying the response out).
        private(set) var isAnswered = false
        var pendingContinue = false

        init(
            sequence: UInt64, method: HTTPMethod, target: RawTarget, route: String?, routeIndex: Int, headers: HTTPHeaders,
            requestID: HTTPRequestID, isHead: Bool, isHTTP10: Bool, keepAlive: Bool, startNanoseconds: UInt64
        ) {
            self.sequence = sequence
            self.method = method
            self.target = target
            self.route = route
            self.routeIndex = routeIndex
            self.headers = headers
            self.requestID = requestID
            self.isHead = isHead
            self.isHTTP10 = isHTTP10
            self.keepAlive = keepAlive
            self.startNanoseconds = startNanoseconds
        }
    }

    /// How the body of the request being received is handled. The cases with payloads are
    /// indirect, so that the mode of a bodiless request (`reject`, the hot path) is copied and
    /// destroyed as a word instead of through the payloads' layout.
    enum BodyMode {
        /// The answer is already decided; the body (if any) is not read.
        case reject
        /// Collected in memory, then the handler runs.
        indirect case collect(maxBytes: Int, handler: Router.Handler, request: HTTPRequest, body: [UInt8])
        /// Streamed to a sink.
        indirect case stream(maxBytes: Int, sink: any HTTPBodySink)
    }

    /// The request whose head was parsed but whose body has not ended.
    struct Incoming {
        var sequence: UInt64
        var mode: BodyMode
        var received = 0
    }
}
