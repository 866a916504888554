import SystemResources

/// Everything the server can be tuned with: where it listens, how many threads it runs, and the
/// limits and timeouts it enforces. Every property has a production default.
public struct HTTPServerConfiguration: Sendable {
    /// The address to listen on (an IPv4 or IPv6 literal; `0.0.0.0` for all IPv4 interfaces).
    public var host: String = "0.0.0.0"
    /// The TCP port; 0 picks an ephemeral port (read it back from `HTTPServer.port`).
    public var port: Int = 8080
    /// How many event-loop threads serve connections; defaults to the CPUs the process may use
    /// (``CPULimit/usableCores``: the container's quota and the affinity mask, not the host's cores).
    public var eventLoopThreads: Int = CPULimit.usableCores
    /// The most connections open at once; connections beyond it get a 503 and are closed.
    public var maxConnections: Int = 10_000
    /// The listen backlog passed to `listen(2)`.
    public var listenBacklog: Int = 1024
    /// The longest request line accepted (CRLF included); longer → 414.
    public var maxRequestLineBytes: Int = 8 * 1024
    /// The largest header section accepted; larger → 431.
    public var maxHeaderBytes: Int = 16 * 1024
    /// The most header fields accepted; more → 431.
    public var maxHeaderFields: Int = 100
    /// The body limit of routes that do not set their own; larger → 413.
    public var defaultMaxBodyBytes: Int = 1024 * 1024
    /// How long a client has to send a complete request head, from its first byte (or from
    /// connect); then 408 and close.
    public var headerReadTimeout: Duration = .seconds(10)
    /// How long a request body may make no progress; then 408 and close.
    public var bodyReadIdleTimeout: Duration = .seconds(30)
    /// How long a blocked response write may make no progress before the connection is dropped.
    public var writeIdleTimeout: Duration = .seconds(30)
    /// How long an idle keep-alive connection is kept open.
    public var keepAliveIdleTimeout: Duration = .seconds(60)
    /// How long a graceful shutdown waits for in-flight requests before closing everything.
    public var drainTimeout: Duration = .seconds(20)
    /// How many requests of one connection may await their response before the server stops
    /// reading more from it (pipelining back-pressure).
    public var maxPipelinedRequests: Int = 16
    /// The per-connection read buffer: the most unparsed bytes (pipelined requests) held per
    /// connection while responses are pending.
    public var readBufferBytes: Int = 16 * 1024
    /// Output back-pressure: once this many response bytes are queued for a connection's socket
    /// (or a write to it is blocked), no further request of that connection is parsed or read
    /// until the queue is down to ``outputLowWaterBytes``. A client that pipelines and never
    /// reads holds at most about this much (plus one response) in the server.
    public var outputHighWaterBytes: Int = 256 * 1024
    /// See ``outputHighWaterBytes``.
    public var outputLowWaterBytes: Int = 64 * 1024
    /// Fairness between the connections of a loop: one connection starts at most this many
    /// requests, and makes at most ``readsPerTurn`` reads, before the loop serves the others.
    public var requestsPerTurn: Int = 32
    /// See ``requestsPerTurn``.
    public var readsPerTurn: Int = 16
    /// The value of the `Server` header on every response.
    public var serverName: String = "Flipbook"
    /// The header that carries a request id on every response (`X-Request-ID`): the client's,
    /// echoed when it is 1–128 printable ASCII characters, else one the server makes. Handlers see
    /// it as ``HTTPRequest/requestID``. nil: no request ids.
    public var requestIDHeader: String? = nil

    /// The defaults.
    public init() {}

    /// The defaults with a host and port.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    var parserLimits: HTTPParserLimits {
        HTTPParserLimits(
            maxRequestLineBytes: maxRequestLineBytes, maxHeaderBytes: maxHeaderBytes,
            maxHeaderFields: maxHeaderFields)
    }
}

extension Duration {
    /// Whole milliseconds, rounded up, at least 1 for positive durations.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return max(0, ms)
    }
}
