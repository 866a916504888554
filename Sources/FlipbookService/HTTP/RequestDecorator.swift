import Foundation
import HTTPServer
import Logging
import Metrics
import Synchronization

/// What every Flipbook response gets on its way out, whichever handler made it: `X-Served-By`,
/// `X-Request-ID` (the client's, or a new one), the CORS headers of ``CORSPolicy``, a per-route
/// request counter and latency histogram, and an access-log line with the client address (from
/// `X-Forwarded-For` only when the peer is a trusted proxy).
final class RequestDecorator: Sendable {
    let instanceName: String
    let trustedProxies: [IPAddressRange]
    let accessLogger: Logger?
    let metrics: HTTPMetrics
    let cors: CORSPolicy

    init(instanceName: String, trustedProxies: [IPAddressRange], accessLogger: Logger?,
         metricsFactory: any MetricsFactory, cors: CORSPolicy = CORSPolicy(origins: [])) {
        self.instanceName = instanceName
        self.cors = cors
        self.trustedProxies = trustedProxies
        self.accessLogger = accessLogger
        self.metrics = HTTPMetrics(factory: metricsFactory)
    }

    /// A request's identity while it is handled.
    struct Context: Sendable {
        var requestID: String
        var route: String
        var started: ContinuousClock.Instant
        var method: String
        var path: String
        var client: String
        /// The request's `Origin`, read only when CORS is on.
        var origin: String?
    }

    func context(for request: HTTPRequest, route: String) -> Context {
        let given = request.headers["X-Request-ID"].flatMap { Self.acceptableRequestID($0) }
        return Context(requestID: given ?? Self.newRequestID(), route: route, started: .now,
                       method: request.method.rawValue, path: request.path,
                       client: accessLogger == nil ? "" : clientAddress(of: request),
                       origin: cors.isEnabled ? request.headers["Origin"] : nil)
    }

    /// Wraps a collected-body handler.
    func wrap(route: String, _ handler: @escaping Router.Handler) -> Router.Handler {
        { [self] request, responder in
            let context = self.context(for: request, route: route)
            let decorated = HTTPResponder { response in
                responder.respond(self.finish(response, context))
            }
            switch handler(request, decorated) {
            case .now(let response): return .now(self.finish(response, context))
            case .later: return .later
            }
        }
    }

    /// Adds the headers, records the metrics and writes the access-log line.
    func finish(_ response: HTTPResponse, _ context: Context) -> HTTPResponse {
        var response = response
        response.headers.set(name: "X-Served-By", value: instanceName)
        response.headers.set(name: "X-Request-ID", value: context.requestID)
        cors.decorate(&response, origin: context.origin)
        let elapsed = ContinuousClock.now - context.started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        metrics.record(method: context.method, route: context.route, status: response.status.code,
                       nanoseconds: Int64(seconds * 1e9))
        if let accessLogger {
            accessLogger.info("request", metadata: [
                "method": "\(context.method)", "path": "\(context.path)", "status": "\(response.status.code)",
                "bytes": "\(response.body.count)", "ms": "\(String(format: "%.2f", seconds * 1000))",
                "client": "\(context.client)", "requestID": "\(context.requestID)"])
        }
        return response
    }

    /// The client: the peer, or the nearest untrusted hop of `X-Forwarded-For` when the peer is
    /// a trusted proxy (walking right to left past other trusted proxies).
    func clientAddress(of request: HTTPRequest) -> String {
        guard let peer = request.remoteAddress?.ip else { return "-" }
        guard isTrusted(peer) else { return peer }
        let hops = request.headers.values(for: "X-Forwarded-For")
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        guard let client = hops.last(where: { !isTrusted($0) }) ?? hops.first else { return peer }
        return IPAddressRange.parse(client) != nil ? client : peer
    }

    func isTrusted(_ address: String) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }

    /// Client request ids are echoed only when short and printable (they go into logs).
    static func acceptableRequestID(_ value: String) -> String? {
        guard (1...128).contains(value.utf8.count),
              value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { return nil }
        return value
    }

    /// A random 32-bit prefix per process and a counter: unique across replicas in practice,
    /// and no system call on the hot path.
    static func newRequestID() -> String {
        let value = requestIDPrefix | UInt64(requestCounter.add(1, ordering: .relaxed).newValue & 0xffff_ffff)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    private static let requestIDPrefix: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next() as UInt64) & 0xffff_ffff_0000_0000
    }()

    private static let requestCounter = Atomic<UInt32>(0)
}
