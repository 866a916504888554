import FoundationEssentials
import FrameCache
import HTTPServer
import ImageStorage
import Logging
import Prometheus

/// `GET /healthz`, `/readyz`, `/metrics`, `/stats` and `POST /admin/memory-pressure`.
struct OperationsRoutes: Sendable {
    let store: ImageStore
    let cache: FrameCache
    let derived: DerivedProducts
    let registry: PrometheusCollectorRegistry
    /// The response hook: its HTTP metrics and access log.
    let decorator: ResponseDecorator
    /// True while the server drains (readiness answers 503).
    let isDraining: @Sendable () -> Bool
    /// The HTTP server's connection counts, for `/metrics` (nil before it runs).
    let connectionStatistics: @Sendable () -> HTTPServerStatistics?
    let adminToken: String
    let logger: Logger

    func register(in router: inout Router) {
        router.get("/healthz") { health($0, $1) }
        router.get("/readyz") { readiness($0, $1) }
        router.get("/metrics") { metrics($0, $1) }
        router.get("/stats") { stats($0, $1) }
        router.post("/admin/memory-pressure", maxBodyBytes: 4096) { memoryPressure($0, $1) }
    }

    func health(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        .now(HTTPResponse.json(Array("{\"status\":\"ok\"}".utf8), headers: ["Cache-Control": "no-store"]))
    }

    /// Readiness, for a proxy's health checks: 503 while draining or when nothing can be stored
    /// locally (so the proxy stops sending new work); 200 `ready`; or 200 `degraded` when the
    /// backing storage (S3) cannot be reached — frames of images whose originals are local are
    /// still served, uploads and images not yet local answer 503 with `Retry-After`, which a proxy
    /// retries on another replica.
    func readiness(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        if isDraining() {
            return .now(
                .problem(
                    .serviceUnavailable, detail: "Draining: this instance is shutting down.",
                    headers: ["Cache-Control": "no-store", "Retry-After": "1"]))
        }
        let health = store.health()
        switch health.status {
        case .down:
            return .now(
                .problem(
                    .serviceUnavailable, detail: health.detail ?? "Storage is not writable.",
                    headers: ["Cache-Control": "no-store"]))
        case .degraded:
            struct Degraded: Encodable {
                var status = "degraded"
                var detail: String
            }
            return .now(
                HTTPResponse.json(
                    JSONBody.encode(Degraded(detail: health.detail ?? "Storage cannot be reached.")),
                    headers: ["Cache-Control": "no-store"]))
        case .ready:
            return .now(HTTPResponse.json(Array("{\"status\":\"ready\"}".utf8), headers: ["Cache-Control": "no-store"]))
        }
    }

    func metrics(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8")
        headers.add(name: "Cache-Control", value: "no-store")
        cache.publishMetrics()
        var body = registry.emitToBuffer()
        decorator.metrics.emit(into: &body)
        if let accessLog = decorator.accessLog {
            let counts = accessLog.counts
            body += Array(
                ("# TYPE flipbook_access_log_lines_total counter\n"
                    + "flipbook_access_log_lines_total \(counts.linesWritten)\n"
                    + "# TYPE flipbook_access_log_dropped_lines_total counter\n"
                    + "flipbook_access_log_dropped_lines_total \(counts.linesDropped)\n").utf8)
        }
        let renditions = cache.renditionCounts()
        body += Array(
            ("# TYPE flipbook_cache_renditions gauge\n"
                + "flipbook_cache_renditions{kind=\"decode_ahead\"} \(renditions.decodeAhead)\n"
                + "flipbook_cache_renditions{kind=\"on_demand\"} \(renditions.onDemand)\n"
                + "flipbook_cache_renditions{kind=\"other\"} "
                + "\(renditions.entries - renditions.decodeAhead - renditions.onDemand)\n"
                + "# TYPE flipbook_cache_shared_renders_total counter\n"
                + "flipbook_cache_shared_renders_total \(renditions.sharedRenders)\n"
                + "# TYPE flipbook_cache_made_beside_total counter\n"
                + "flipbook_cache_made_beside_total \(renditions.madeBeside)\n"
                + "# TYPE flipbook_cache_renditions_replaced_total counter\n"
                + "flipbook_cache_renditions_replaced_total \(renditions.replaced)\n").utf8)
        if let decode = cache.configuration.decodeBudget?.stats() {
            body += Array(
                ("# TYPE flipbook_decode_memory_budget_bytes gauge\n"
                    + "flipbook_decode_memory_budget_bytes \(decode.capacityBytes)\n"
                    + "# TYPE flipbook_decode_memory_used_bytes gauge\n"
                    + "flipbook_decode_memory_used_bytes \(decode.usedBytes)\n"
                    + "# TYPE flipbook_decode_memory_peak_bytes gauge\n"
                    + "flipbook_decode_memory_peak_bytes \(decode.peakBytes)\n"
                    + "# TYPE flipbook_decode_memory_waiting gauge\n"
                    + "flipbook_decode_memory_waiting \(decode.waiting)\n"
                    + "# TYPE flipbook_decode_memory_waits_total counter\n"
                    + "flipbook_decode_memory_waits_total \(decode.waits)\n"
                    + "# TYPE flipbook_decode_memory_refused_total counter\n"
                    + "flipbook_decode_memory_refused_total{reason=\"queue_full\"} \(decode.refusedQueueFull)\n"
                    + "flipbook_decode_memory_refused_total{reason=\"too_large\"} \(decode.refusedTooLarge)\n").utf8)
        }
        body += Array(derived.counters.prometheusText(usage: derived.store.usage()).utf8)
        body += Array(store.recordStats.prometheusText.utf8)
        if let connections = connectionStatistics() {
            body += Array(
                ("# TYPE flipbook_http_connections gauge\n"
                    + "flipbook_http_connections \(connections.openConnections)\n"
                    + "# TYPE flipbook_http_connections_paused gauge\n"
                    + "flipbook_http_connections_paused \(connections.pausedConnections)\n"
                    + "# TYPE flipbook_http_backpressure_pauses_total counter\n"
                    + "flipbook_http_backpressure_pauses_total \(connections.backPressurePauses)\n").utf8)
        }
        return .now(HTTPResponse(status: .ok, headers: headers, body: body))
    }

    func stats(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        .now(statsResponse())
    }

    /// The `/stats` document, never cached: also the answer to a memory-pressure request.
    private func statsResponse() -> HTTPResponse {
        HTTPResponse.json(
            JSONBody.encode(
                ServiceStats(
                    cache: cache.stats(listing: CacheStats.listedImages), files: store.fileStats, records: store.recordStats,
                    accessLog: AccessLogStats(decorator.accessLog), derived: derived.stats())),
            headers: ["Cache-Control": "no-store"])
    }

    /// The simulated memory-pressure signal (admin).
    func memoryPressure(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        if let refusal = Authorization.check(
            request, token: adminToken, what: "The admin API",
            disabledWhenEmpty: true)
        {
            return .now(.problem(refusal))
        }
        let text = request.query("level") ?? ""
        guard let level = PressureLevel(rawValue: text), level != .normal else {
            return .now(.problem(.badRequest, detail: "level must be warning or critical, not '\(text)'."))
        }
        cache.memoryPressure(level, source: "admin")
        logger.notice("memory pressure raised", metadata: ["level": "\(level.rawValue)", "source": "admin"])
        return .now(statsResponse())
    }
}
