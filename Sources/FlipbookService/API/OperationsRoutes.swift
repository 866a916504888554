import FrameCache
import Foundation
import HTTPServer

/// `GET /healthz`, `/readyz`, `/metrics`, `/stats` and `POST /admin/memory-pressure`.
extension FlipbookAPI {
    func health(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        .now(Self.json(Array("{\"status\":\"ok\"}".utf8), headers: ["Cache-Control": "no-store"]))
    }

    /// Ready when not draining and the data directory takes writes; 503 otherwise, so a proxy
    /// stops sending new work.
    func readiness(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        if isDraining() {
            return .now(.problem(.serviceUnavailable, detail: "Draining: this instance is shutting down.",
                                 headers: ["Cache-Control": "no-store", "Retry-After": "1"]))
        }
        guard store.isWritable else {
            return .now(.problem(.serviceUnavailable, detail: "The data directory is not writable.",
                                 headers: ["Cache-Control": "no-store"]))
        }
        return .now(Self.json(Array("{\"status\":\"ready\"}".utf8), headers: ["Cache-Control": "no-store"]))
    }

    func metrics(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8")
        headers.add(name: "Cache-Control", value: "no-store")
        return .now(HTTPResponse(status: .ok, headers: headers, body: registry.emitToBuffer()))
    }

    func stats(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        .now(statsResponse())
    }

    /// The `/stats` document, never cached: also the answer to a memory-pressure request.
    private func statsResponse() -> HTTPResponse {
        Self.json(Self.encodeJSON(ServiceStats(cache: cache.stats(), files: store.fileStats)),
                  headers: ["Cache-Control": "no-store"])
    }

    /// The simulated memory-pressure signal (admin).
    func memoryPressure(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        if let refusal = Authorization.check(request, token: settings.auth.adminToken, what: "The admin API",
                                             disabledWhenEmpty: true) {
            return .now(Self.problem(refusal))
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
