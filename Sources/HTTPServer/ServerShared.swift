import Logging
import Synchronization

/// What every event loop of one server reads: configuration, router, hook, logger, and the
/// counters shared across loops.
final class ServerShared: Sendable {
    let configuration: HTTPServerConfiguration
    let router: Router
    let logger: Logger
    let onResponse: (@Sendable (HTTPAccessRecord) -> Void)?
    /// `Server: …\r\n`, ready to copy into each head.
    let serverLine: [UInt8]
    private let openConnections = Atomic<Int>(0)
    private let connectionIDs = Atomic<UInt64>(0)

    init(configuration: HTTPServerConfiguration, router: Router, logger: Logger,
         onResponse: (@Sendable (HTTPAccessRecord) -> Void)?) {
        self.configuration = configuration
        self.router = router
        self.logger = logger
        self.onResponse = onResponse
        var name = HTTPHeaders()
        name.add(name: "Server", value: configuration.serverName)
        var line: [UInt8] = []
        name.serialize(into: &line)
        serverLine = line
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
