import Logging
import Synchronization

/// What every event loop of one server reads: configuration, router, hook, logger, the bytes
/// every response head carries, and the counters shared across loops.
final class ServerShared: Sendable {
    let configuration: HTTPServerConfiguration
    let router: Router
    /// The router's routes as the loops match them (one reference, not a copy of the router).
    let routeTable: RouteTable
    let logger: Logger
    let hook: (any HTTPResponseHook)?
    /// `Server: …\r\n`, ready to copy into each head.
    let serverLine: [UInt8]
    /// The hook's constant lines, read once.
    let constantHeaderLines: [UInt8]
    /// Whether the hook adds lines per request (``HTTPResponseHook/appendsHeaderLines``), read once.
    let hookAppendsHeaderLines: Bool
    /// `X-Request-ID: ` (the configured name), and the name in lower case for look-ups; nil when
    /// the server has no request-id header.
    let requestIDLinePrefix: [UInt8]?
    let requestIDLowercasedName: [UInt8]?
    /// The random part of the ids the loops make (each loop adds its index).
    let requestIDBase: UInt32
    /// The configuration's timeouts in whole milliseconds (``Duration/milliseconds``), worked out
    /// once: a connection's deadline is recomputed after every request.
    let headerReadTimeoutMilliseconds: Int64
    let bodyReadIdleTimeoutMilliseconds: Int64
    let writeIdleTimeoutMilliseconds: Int64
    let keepAliveIdleTimeoutMilliseconds: Int64
    private let openConnections = Atomic<Int>(0)
    private let connectionIDs = Atomic<UInt64>(0)
    private let pausedConnections = Atomic<Int>(0)
    private let pauses = Atomic<Int>(0)
    private let peakQueuedBytes = Atomic<Int>(0)

    init(configuration: HTTPServerConfiguration, router: Router, logger: Logger, hook: (any HTTPResponseHook)?) {
        self.configuration = configuration
        self.router = router
        routeTable = RouteTable(router)
        self.logger = logger
        self.hook = hook
        var name = HTTPHeaders()
        name.add(name: "Server", value: configuration.serverName)
        var line: [UInt8] = []
        name.serialize(into: &line)
        serverLine = line
        constantHeaderLines = hook?.constantHeaderLines ?? []
        hookAppendsHeaderLines = hook?.appendsHeaderLines ?? false
        if let header = configuration.requestIDHeader, !header.isEmpty {
            var prefix = HTTPHeaders()
            prefix.add(name: header, value: "")
            var bytes: [UInt8] = []
            prefix.serialize(into: &bytes)
            requestIDLinePrefix = Array(bytes.dropLast(2))  // "Name: " without the CRLF
            requestIDLowercasedName = header.utf8.map { ASCII.lower($0) }
        } else {
            requestIDLinePrefix = nil
            requestIDLowercasedName = nil
        }
        var generator = SystemRandomNumberGenerator()
        requestIDBase = generator.next()
        headerReadTimeoutMilliseconds = configuration.headerReadTimeout.milliseconds
        bodyReadIdleTimeoutMilliseconds = configuration.bodyReadIdleTimeout.milliseconds
        writeIdleTimeoutMilliseconds = configuration.writeIdleTimeout.milliseconds
        keepAliveIdleTimeoutMilliseconds = configuration.keepAliveIdleTimeout.milliseconds
    }

    /// Counts a new connection; false (and not counted) when the limit is reached.
    func connectionOpened() -> Bool {
        let opened = openConnections.wrappingAdd(1, ordering: .relaxed).newValue
        if opened > configuration.maxConnections {
            openConnections.wrappingSubtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    func connectionClosed() {
        openConnections.wrappingSubtract(1, ordering: .relaxed)
    }

    var connectionCount: Int { openConnections.load(ordering: .relaxed) }

    func nextConnectionID() -> UInt64 {
        connectionIDs.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// A connection stopped (true) or resumed (false) taking requests for output back-pressure.
    func outputPaused(_ paused: Bool) {
        if paused {
            pausedConnections.wrappingAdd(1, ordering: .relaxed)
            pauses.wrappingAdd(1, ordering: .relaxed)
        } else {
            pausedConnections.wrappingSubtract(1, ordering: .relaxed)
        }
    }

    /// A connection's queued output reached `bytes`, more than it ever had before.
    func queuedOutputPeak(_ bytes: Int) {
        var seen = peakQueuedBytes.load(ordering: .relaxed)
        while bytes > seen {
            let (exchanged, original) = peakQueuedBytes.compareExchange(expected: seen, desired: bytes, ordering: .relaxed)
            if exchanged { return }
            seen = original
        }
    }

    var statistics: HTTPServerStatistics {
        HTTPServerStatistics(
            openConnections: connectionCount, pausedConnections: pausedConnections.load(ordering: .relaxed),
            backPressurePauses: pauses.load(ordering: .relaxed),
            peakQueuedOutputBytes: peakQueuedBytes.load(ordering: .relaxed))
    }
}

/// Connection counts of a running server (``HTTPServer/statistics``).
public struct HTTPServerStatistics: Sendable, Equatable {
    /// Connections open now.
    public var openConnections: Int
    /// Connections not taking requests now because their output is backed up (a client that
    /// does not read its responses).
    public var pausedConnections: Int
    /// How many times a connection was paused so, since the start.
    public var backPressurePauses: Int
    /// The most response bytes ever queued for one connection's socket.
    public var peakQueuedOutputBytes: Int
}
