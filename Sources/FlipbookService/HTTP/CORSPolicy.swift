import HTTPServer

/// Cross-origin access (`server.corsOrigins`): which web origins may call the API from a page
/// of their own — a `<flipbook-player>` on another site — and the headers that tell browsers so.
///
/// Off when the list is empty (the default): no CORS header is ever sent. `*` allows any
/// origin (answered with `Access-Control-Allow-Origin: *`); otherwise an origin is allowed when it
/// equals an entry (`https://example.com`, `http://localhost:3000`), and the answer names it and
/// carries `Vary: Origin` — on every response, so a shared cache never hands one origin's answer to
/// another. Credentials (cookies) are never allowed: Flipbook's tokens are `Authorization` headers,
/// which a page sends explicitly and which the preflight allows.
struct CORSPolicy: Sendable {
    /// The exact origins allowed (lower-cased scheme and host), unless `allowsAny`.
    let origins: Set<String>
    let allowsAny: Bool

    /// Request headers a cross-origin page may send.
    static let allowedHeaders = "Authorization, Content-Type, If-None-Match, X-Request-ID"
    /// Response headers a cross-origin page may read besides the CORS-safelisted ones.
    static let exposedHeaders =
        "Content-Location, ETag, Location, Retry-After, X-Frame-Count, X-Frame-Delay-Ms, "
        + "X-Frame-Index, X-Request-ID, X-Served-By"
    /// How long a browser may reuse a preflight answer (seconds).
    static let maxAgeSeconds = 600

    init(origins: [String]) {
        allowsAny = origins.contains("*")
        self.origins = Set(origins.filter { $0 != "*" }.map { $0.lowercased() })
    }

    var isEnabled: Bool { allowsAny || !origins.isEmpty }

    /// Whether `entry` can be a `server.corsOrigins` entry: `*`, or `scheme://host[:port]` with an
    /// http(s) scheme and no path (what browsers send in `Origin`).
    static func isValidEntry(_ entry: String) -> Bool {
        if entry == "*" { return true }
        let lower = entry.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") {
            rest = lower.dropFirst(8)
        } else if lower.hasPrefix("http://") {
            rest = lower.dropFirst(7)
        } else {
            return false
        }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("?"), !rest.contains("#"), !rest.contains("@") else {
            return false
        }
        return rest.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7f }
    }

    /// The `Access-Control-Allow-Origin` value for a request's `Origin`, or nil when not allowed.
    func allowedOrigin(_ origin: String?) -> String? {
        if allowsAny { return "*" }
        guard let origin, origins.contains(origin.lowercased()) else { return nil }
        return origin
    }

    /// The CORS header lines that do not depend on the request, for every response: with `*`,
    /// all of them; with a list of origins, none.
    var constantLines: [UInt8] {
        allowsAny
            ? Self.lines([
                ("Access-Control-Allow-Origin", "*"),
                ("Access-Control-Expose-Headers", Self.exposedHeaders),
            ]) : []
    }

    /// Appends the CORS header lines an actual (non-preflight) response to a request from
    /// `origin` needs when origins are listed: `Vary: Origin`, and for a listed origin, the
    /// origin and the exposed headers. Nothing for `*` (see ``constantLines``) or when off.
    func appendLines(origin: String?, to head: inout [UInt8]) {
        guard isEnabled, !allowsAny else { return }
        head += Self.varyOrigin
        guard let allowed = allowedOrigin(origin) else { return }
        head += Self.lines([
            ("Access-Control-Allow-Origin", allowed),
            ("Access-Control-Expose-Headers", Self.exposedHeaders),
        ])
    }

    private static let varyOrigin = lines([("Vary", "Origin")])

    /// `Name: value\r\n` lines (CR, LF and NUL in values become spaces, as `HTTPHeaders` does).
    private static func lines(_ fields: [(String, String)]) -> [UInt8] {
        var headers = HTTPHeaders()
        for (name, value) in fields { headers.add(name: name, value: value) }
        var bytes: [UInt8] = []
        for field in headers {
            bytes += Array(field.name.utf8) + [0x3A, 0x20] + Array(field.value.utf8) + [0x0D, 0x0A]
        }
        return bytes
    }

    /// The answer to `OPTIONS` on a known path: 204 with `Allow`, plus, for an allowed origin's
    /// preflight (`Access-Control-Request-Method` one of the path's methods), the methods,
    /// headers and max age the browser may use. `Access-Control-Allow-Origin` and `Vary: Origin`
    /// come from ``constantLines`` and ``appendLines(origin:to:)`` like on every response. A preflight from an origin that
    /// is not allowed gets no CORS header, and the browser refuses the request it wanted to make.
    func preflight(_ request: HTTPRequest, allowed: [HTTPMethod]) -> HTTPResponse {
        var response = HTTPResponse(status: .noContent)
        let methods = allowed.map(\.rawValue).joined(separator: ", ")
        response.headers.add(name: "Allow", value: methods)
        guard isEnabled else { return response }
        if !allowsAny {
            response.headers.add(name: "Vary", value: "Access-Control-Request-Method, Access-Control-Request-Headers")
        }
        guard allowedOrigin(request.headers["Origin"]) != nil,
            let wanted = request.headers["Access-Control-Request-Method"],
            allowed.contains(where: { $0.rawValue == wanted })
        else { return response }
        response.headers.add(name: "Access-Control-Allow-Methods", value: methods)
        response.headers.add(name: "Access-Control-Allow-Headers", value: Self.allowedHeaders)
        response.headers.add(name: "Access-Control-Max-Age", value: String(Self.maxAgeSeconds))
        return response
    }
}
