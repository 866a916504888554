import FoundationEssentials
import HTTPServer
import SystemResources

/// What every Flipbook response gets on its way out, whichever part of the server made it — a
/// handler, the router's 404/405, the parser's errors, the 503 at the connection limit: the
/// `X-Served-By` header (and any other constant headers the service adds), the CORS headers of
/// ``CORSPolicy``, an `X-Request-ID` (the server echoes the client's or makes one), a count and a
/// latency in the request metrics, and an access-log line with the client address (from
/// `X-Forwarded-For` only when the peer is a trusted proxy).
///
/// It is the HTTP server's ``HTTPResponseHook``: it runs on the event loops, so it only formats
/// into per-loop memory (metrics tables, access-log chunks).
final class ResponseDecorator: HTTPResponseHook {
    /// The name of the request-id header the server is configured with.
    static let requestIDHeader = "X-Request-ID"

    let instanceName: String
    let trustedProxies: [IPAddressRange]
    let accessLog: AccessLog?
    let metrics: HTTPMetrics
    let cors: CORSPolicy
    let constantHeaderLines: [UInt8]

    /// - Parameter constantHeaders: headers every response carries besides `X-Served-By`.
    init(
        instanceName: String, constantHeaders: HTTPHeaders = HTTPHeaders(), trustedProxies: [IPAddressRange],
        accessLog: AccessLog?, metrics: HTTPMetrics, cors: CORSPolicy = CORSPolicy(origins: [])
    ) {
        self.instanceName = instanceName
        self.trustedProxies = trustedProxies
        self.accessLog = accessLog
        self.metrics = metrics
        self.cors = cors
        var headers = HTTPHeaders()
        headers.add(name: "X-Served-By", value: instanceName)
        for field in constantHeaders { headers.add(name: field.name, value: field.value) }
        var lines: [UInt8] = []
        for field in headers {
            lines += Array(field.name.utf8) + [0x3A, 0x20] + Array(field.value.utf8) + [0x0D, 0x0A]
        }
        constantHeaderLines = lines + cors.constantLines
    }

    /// Only CORS for listed origins adds lines per request (`*` is among the constant lines).
    var appendsHeaderLines: Bool { cors.isEnabled && !cors.allowsAny }

    func appendHeaderLines(for record: HTTPAccessRecord, to head: inout [UInt8]) {
        guard appendsHeaderLines else { return }
        cors.appendLines(origin: record.requestHeaders["Origin"], to: &head)
    }

    func responseQueued(_ record: consuming HTTPAccessRecord) {
        metrics.record(record)
        guard let accessLog else { return }
        let client = clientAddress(record)
        accessLog.append(AccessLogLine(record: record, client: client))
    }

    /// The client (``ClientAddresses``), or "-" when the peer is not known.
    func clientAddress(_ record: HTTPAccessRecord) -> String {
        ClientAddresses(trustedProxies: trustedProxies).client(peer: record.remoteAddress, headers: record.requestHeaders) ?? "-"
    }
}
