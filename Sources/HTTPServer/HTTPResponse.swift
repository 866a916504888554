/// A response a handler gives back: status, header fields and the whole body in memory.
///
/// The server adds `Content-Length`, `Date`, `Server`, and `Connection` when needed; do not set
/// them yourself (for a HEAD answer whose body you did not build, you may set `Content-Length`).
/// The body array is handed to `writev` as it is, so a cached `[UInt8]` is sent without a copy.
public struct HTTPResponse: Sendable {
    /// The status line's code and reason.
    public var status: HTTPStatus
    /// Header fields to send, in order.
    public var headers: HTTPHeaders
    /// The body bytes; ignored for HEAD requests and for 1xx, 204 and 304 responses.
    public var body: [UInt8]

    /// A response with the given status, headers and body.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is `text` in UTF-8, with `Content-Type` set.
    public init(status: HTTPStatus = .ok, text: String, contentType: String = "text/plain; charset=utf-8") {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        self.init(status: status, headers: headers, body: Array(text.utf8))
    }

    /// An RFC 9457 `application/problem+json` response: `type` "about:blank", `title` the
    /// status's reason phrase, `status`, and `detail`.
    public static func problem(_ status: HTTPStatus, detail: String,
                               headers extraHeaders: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/problem+json")
        for field in extraHeaders { headers.add(name: field.name, value: field.value) }
        let body = "{\"type\":\"about:blank\",\"title\":\(jsonString(status.reasonPhrase)),"
            + "\"status\":\(status.code),\"detail\":\(jsonString(detail))}"
        return HTTPResponse(status: status, headers: headers, body: Array(body.utf8))
    }

    /// `text` as a JSON string literal (quotes included).
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
