/// Writes response heads into a connection's output bytes: status line, `Content-Length` and the
/// handler's fields (or a prepared response's encoded head), then what every response gets —
/// `Server`, `Date`, the response hook's lines, the request id — and `Connection`. The body array
/// goes to `sendmsg` after the head, untouched.
enum ResponseSerializer {
    /// How the `Connection` header is set on a response.
    enum ConnectionHeader {
        /// Nothing (HTTP/1.1 persistent connection).
        case none
        /// `Connection: close`: this is the connection's last response.
        case close
        /// `Connection: keep-alive`, for HTTP/1.0 clients that asked for it.
        case keepAlive
    }

    static let continueLine: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
    private static let statusPrefix: [UInt8] = Array("HTTP/1.1 ".utf8)
    private static let contentLengthPrefix: [UInt8] = Array("Content-Length: ".utf8)
    private static let closeLine: [UInt8] = Array("Connection: close\r\n".utf8)
    private static let keepAliveLine: [UInt8] = Array("Connection: keep-alive\r\n".utf8)

    /// Appends the first part of `response`'s head: its status line and fields — a prepared
    /// response's encoded bytes plus any fields added to it, or `Content-Length` and the fields
    /// encoded now. `sendsBody` is false for HEAD requests; `Content-Length` is still the body's
    /// length (or the handler's own `Content-Length` when it sent no body to HEAD).
    static func appendStatusAndFields(of response: HTTPResponse, sendsBody: Bool, to out: inout [UInt8]) {
        // Chained, the prepared answer is used where the response holds it; bound with `if let`,
        // the optional was copied out and destroyed (through the runtime's generic witnesses).
        if response.preparedAnswer?.appendHead(to: &out) != nil {
            response.ownFields?.serialize(into: &out)
        } else {
            appendStatusAndFields(
                status: response.status, headers: response.headers, bodyCount: response.bodyCount,
                sendsBody: sendsBody, to: &out)
        }
    }

    /// Status line, `Content-Length` (unless the status forbids a body) and `headers` (less any
    /// `Content-Length` of theirs that does not apply).
    static func appendStatusAndFields(
        status: HTTPStatus, headers: HTTPHeaders, bodyCount: Int, sendsBody: Bool,
        to out: inout [UInt8]
    ) {
        out.append(contentsOf: statusPrefix)
        appendDecimal(status.code, to: &out)
        out.append(0x20)
        out.append(contentsOf: status.reasonPhrase.utf8)
        out.append(0x0D)
        out.append(0x0A)
        let hasOwnLength = headers.contains("Content-Length")
        if !status.forbidsBody {
            let keepsOwnLength = !sendsBody && bodyCount == 0 && hasOwnLength
            if !keepsOwnLength {
                out.append(contentsOf: contentLengthPrefix)
                appendDecimal(bodyCount, to: &out)
                out.append(0x0D)
                out.append(0x0A)
                if hasOwnLength {
                    var others = headers
                    others.remove(name: "Content-Length")
                    others.serialize(into: &out)
                    return
                }
            }
        } else if hasOwnLength && status.code != 304 {
            var others = headers
            others.remove(name: "Content-Length")
            others.serialize(into: &out)
            return
        }
        headers.serialize(into: &out)
    }

    /// Appends the `Connection` line (if any) and the blank line that ends the head.
    static func appendEnd(_ connection: ConnectionHeader, to out: inout [UInt8]) {
        switch connection {
        case .none: break
        case .close: out.append(contentsOf: closeLine)
        case .keepAlive: out.append(contentsOf: keepAliveLine)
        }
        out.append(0x0D)
        out.append(0x0A)
    }

    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value < 10 {
            out.append(UInt8(truncatingIfNeeded: value) + 0x30)
            return
        }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { raw in
            while rest > 0 {
                raw[count] = UInt8(truncatingIfNeeded: rest % 10) + 0x30
                rest /= 10
                count += 1
            }
            for index in stride(from: count - 1, through: 0, by: -1) { out.append(raw[index]) }
        }
    }
}
