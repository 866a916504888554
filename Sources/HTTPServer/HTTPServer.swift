import Glibc
// The server's API speaks in the parser's types (HTTPHeaders, HTTPMethod, HTTPRequestHead, …).
@_exported import HTTPParsing
import Logging
import ServiceLifecycle
import Synchronization
import SystemResources

/// A hand-rolled HTTP/1.1 server: epoll event loops on their own threads, keep-alive, pipelining,
/// limits, timeouts, graceful draining, and a `Router` of handlers.
///
/// Use it as a swift-service-lifecycle `Service` in a `ServiceGroup` (SIGTERM/SIGINT then start a
/// graceful drain), or drive it directly:
///
/// ```swift
/// var router = Router()
/// router.get("/frames/:id/:index") { request, responder in
///     .now(HTTPResponse(status: .ok, body: bytes))
/// }
/// let server = HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), router: router)
/// try server.start()          // binds; `server.port` is now the real port
/// …
/// server.shutdown()           // drain: stop accepting, finish in-flight requests
/// await server.waitUntilStopped()
/// ```
public final class HTTPServer: Service, Sendable {
    private enum Phase {
        case idle
        case running
        case draining
        case stopped
    }

    private struct State {
        var phase = Phase.idle
        var loops: [EventLoop] = []
        /// The listening socket, kept to stop it listening when the drain begins.
        var listener: ListeningSocket?
        var port = 0
        var runningLoops = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The configuration the server was made with.
    public let configuration: HTTPServerConfiguration
    private let shared: ServerShared
    private let state = Mutex(State())

    /// Makes a server; nothing is bound until `start()` or `run()`.
    ///
    /// - Parameters:
    ///   - hook: sees every response the server sends, whatever made it (a handler, the router,
    ///     the parser, the connection limit): adds the header lines every response carries and
    ///     keeps the access log and metrics. Called on the event-loop threads; keep it quick.
    public init(
        configuration: HTTPServerConfiguration = HTTPServerConfiguration(), router: Router,
        logger: Logger = Logger(label: "flipbook.http"), hook: (any HTTPResponseHook)? = nil
    ) {
        self.configuration = configuration
        shared = ServerShared(configuration: configuration, router: router, logger: logger, hook: hook)
    }

    /// The bound port (the real one when the configuration asked for port 0); 0 before `start()`.
    public var port: Int { state.withLock { $0.port } }

    /// Whether a graceful shutdown has begun (answer readiness probes with 503 then).
    public var isDraining: Bool {
        state.withLock { $0.phase == .draining || $0.phase == .stopped }
    }

    /// The number of connections open right now, across all loops.
    public var openConnections: Int { shared.connectionCount }

    /// Connection counts, back-pressure included.
    public var statistics: HTTPServerStatistics { shared.statistics }

    /// Binds the listening socket and starts the event-loop threads. Calling it again does nothing.
    ///
    /// The process ignores `SIGPIPE` from then on: bodies in files go out with `sendfile(2)`,
    /// which has no `MSG_NOSIGNAL`, and a peer that closes in the middle must be an `EPIPE` error
    /// for its connection, not the end of the process.
    public func start() throws {
        signal(SIGPIPE, SIG_IGN)
        try state.withLock { state in
            guard state.phase == .idle else { return }
            let (listenFD, port) = try POSIX.listen(
                host: configuration.host, port: configuration.port,
                backlog: configuration.listenBacklog)
            var loops: [EventLoop] = []
            do {
                for index in 0..<max(1, configuration.eventLoopThreads) {
                    loops.append(try EventLoop(index: index, shared: shared))
                }
            } catch {
                POSIX.closeDescriptor(listenFD)
                throw error
            }
            let listener = ListeningSocket(fd: listenFD, holders: loops.count)
            for loop in loops { loop.accept(from: listener, loops: loops) }
            state.listener = listener
            state.loops = loops
            state.port = port
            state.phase = .running
            state.runningLoops = loops.count
            for (index, loop) in loops.enumerated() {
                DetachedThread.start(name: "flipbook-loop-\(index)") { [self] in
                    loop.run()
                    self.loopFinished()
                }
            }
        }
        shared.logger.info(
            "HTTP server listening",
            metadata: [
                "host": "\(configuration.host)", "port": "\(port)",
                "loops": "\(configuration.eventLoopThreads)",
            ])
    }

    /// Starts the graceful drain: stop accepting, finish in-flight requests (their last responses
    /// carry `Connection: close`), close idle connections, force-close after `drainTimeout`.
    /// Safe to call from any thread, any number of times.
    public func shutdown() {
        let loops = state.withLock { state -> [EventLoop] in
            switch state.phase {
            case .idle:
                state.phase = .stopped
                return []
            case .running:
                state.phase = .draining
                state.listener?.stopListening()
                state.listener = nil
                return state.loops
            case .draining, .stopped:
                return []
            }
        }
        if !loops.isEmpty { shared.logger.info("HTTP server draining") }
        for loop in loops { loop.requestDrain() }
        resumeWaitersIfStopped()
    }

    /// Returns once every event loop has finished (after `shutdown()` and the drain).
    public func waitUntilStopped() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.phase == .stopped { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// `Service`: starts the server, and drains it on graceful shutdown or task cancellation.
    public func run() async throws {
        try start()
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await waitUntilStopped()
            } onGracefulShutdown: {
                self.shutdown()
            }
        } onCancel: {
            self.shutdown()
        }
    }

    private func loopFinished() {
        state.withLock { $0.runningLoops -= 1 }
        resumeWaitersIfStopped()
    }

    private func resumeWaitersIfStopped() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.phase == .draining && state.runningLoops == 0 { state.phase = .stopped }
            guard state.phase == .stopped else { return [] }
            let waiters = state.waiters
            state.waiters.removeAll()
            state.loops.removeAll()
            return waiters
        }
        if !waiters.isEmpty { shared.logger.info("HTTP server stopped") }
        for waiter in waiters { waiter.resume() }
    }
}
