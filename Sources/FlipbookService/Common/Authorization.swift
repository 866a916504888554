import Crypto
import FoundationEssentials
import HTTPServer
import SystemResources

/// Bearer-token checks for admin routes and (optionally) uploads. Tokens are compared in
/// constant time, by their SHA-256, so timing reveals nothing about them.
enum Authorization {
    /// nil when `request` may proceed; otherwise the refusal to answer with.
    /// - `token` empty and `requiredWhenEmpty`: the route is disabled (403).
    /// - `token` empty otherwise: no check.
    static func check(_ request: HTTPRequest, token: String, what: String, disabledWhenEmpty: Bool) -> HTTPError? {
        if token.isEmpty {
            return disabledWhenEmpty
                ? HTTPError(.forbidden, detail: "\(what) is disabled: no admin token is configured (auth.adminToken).")
                : nil
        }
        guard let header = request.headers["Authorization"] else {
            return unauthorized("\(what) needs 'Authorization: Bearer <token>'.")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            return unauthorized("\(what) needs a Bearer token in Authorization.")
        }
        let given = SHA256.hash(data: Array(parts[1].trimmingSpaces().utf8))
        let expected = SHA256.hash(data: Array(token.utf8))
        var difference: UInt8 = 0
        for (a, b) in zip(given, expected) { difference |= a ^ b }
        return difference == 0 ? nil : unauthorized("The token is not valid for \(what).")
    }

    static func unauthorized(_ detail: String) -> HTTPError {
        var headers = HTTPHeaders()
        headers.add(name: "WWW-Authenticate", value: "Bearer realm=\"flipbook\"")
        return HTTPError(.unauthorized, detail: detail, headers: headers)
    }
}
