import Logging
import Synchronization

/// What every event loop of one server reads: configuration, router, hook, logger, the bytes
/// every response head carries, and the counters shared across loops.
final class ServerShared: Sendable {
    let configuration: HTTPServerConfiguration
    let router: Router
    let logger: Logger
    let hook: (any HTTPResponseHook)?
    /// `Server: …\r\n`, ready to copy into each head.
    let serverLine: [UInt8]
    /// The hook's constant lines, read once.
    let constantHeaderLines: [UInt8]
    /// `X-Request-ID: ` (the configured name), and the name in lower case for look-ups; nil when
    /// the server has no request-id header.
    let requestIDLinePrefix: [UInt8]?
    let requestIDLowercasedName: [UInt8]?
    /// The random part of the ids the loops make (each loop adds its index).
    let requestIDBase: UInt32
    private let openConnections = Atomic<Int>(0)
    private let connectionIDs = Atomic<UInt64>(0)

    init(configuration: HTTPServerConfiguration, router: Router, logger: Logger, hook: (any HTTPResponseHook)?) {
        self.configuration = configuration
        self.router = router
        self.logger = logger
        self.hook = hook
        var name = HTTPHeaders()
        name.add(name: "Server", value: configuration.serverName)
        var line: [UInt8] = []
        name.serialize(into: &line)
        serverLine = line
        constantHeaderLines = hook?.constantHeaderLines ?? []
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
}
