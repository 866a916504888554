/// Writes response heads: status line, `Server`, `Date`, `Content-Length`, the handler's fields
/// and `Connection`, in one buffer that goes to `writev` ahead of the untouched body array.
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
    private static let contentLengthPrefix: [UInt8] = Array("Content-Length: ".utf8)
    private static let closeLine: [UInt8] = Array("Connection: close\r\n".utf8)
    private static let keepAliveLine: [UInt8] = Array("Connection: keep-alive\r\n".utf8)

    /// The head of `response`. `sendsBody` is false for HEAD requests; `Content-Length` is still
    /// the body's length (or the handler's own `Content-Length` when it sent no body to HEAD).
    static func head(for response: HTTPResponse, sendsBody: Bool, serverLine: [UInt8], dateLine: [UInt8],
                     connection: ConnectionHeader) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + serverLine.count + response.headers.storage.count)
        let status = response.status
        out.append(contentsOf: [0x48, 0x54, 0x54, 0x50, 0x2F, 0x31, 0x2E, 0x31, 0x20]) // "HTTP/1.1 "
        appendDecimal(status.code, to: &out)
        out.append(0x20)
        out.append(contentsOf: status.reasonPhrase.utf8)
        out.append(0x0D)
        out.append(0x0A)
        out.append(contentsOf: serverLine)
        out.append(contentsOf: dateLine)
        var headers = response.headers
        if !status.forbidsBody {
            let ownLength = !sendsBody && response.body.isEmpty && headers.contains("Content-Length")
            if !ownLength {
                if headers.contains("Content-Length") { headers.remove(name: "Content-Length") }
                out.append(contentsOf: contentLengthPrefix)
                appendDecimal(response.body.count, to: &out)
                out.append(0x0D)
                out.append(0x0A)
            }
        } else if headers.contains("Content-Length") && status.code != 304 {
            headers.remove(name: "Content-Length")
        }
        headers.serialize(into: &out)
        switch connection {
        case .none: break
        case .close: out.append(contentsOf: closeLine)
        case .keepAlive: out.append(contentsOf: keepAliveLine)
        }
        out.append(0x0D)
        out.append(0x0A)
        return out
    }

    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value < 10 {
            out.append(UInt8(truncatingIfNeeded: value) + 0x30)
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
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
