/// Where an S3-compatible server listens: `http(s)://host[:port]`, nothing else (no path, no
/// credentials in the URL).
public struct S3Endpoint: Sendable, Equatable {
    public var secure: Bool
    public var host: String
    /// nil = the scheme's default port (then `Host` carries no port, as clients send it).
    public var port: Int?

    public init?(_ text: String) {
        let rest: Substring
        if text.hasPrefix("https://") {
            secure = true
            rest = text.dropFirst(8)
        } else if text.hasPrefix("http://") {
            secure = false
            rest = text.dropFirst(7)
        } else {
            return nil
        }
        var authority = rest
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@"), !authority.contains("?") else {
            return nil
        }
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            guard let port = Int(authority[authority.index(after: colon)...]), (1...65535).contains(port) else {
                return nil
            }
            host = String(authority[..<colon])
            self.port = port == (secure ? 443 : 80) ? nil : port
        } else {
            host = String(authority)
            port = nil
        }
        guard !host.isEmpty else { return nil }
    }

    /// AWS's regional endpoint.
    public static func aws(region: String) -> S3Endpoint {
        S3Endpoint("https://s3.\(region).amazonaws.com")!
    }

    /// `host[:port]` for `host` (a bucket's virtual host, or the endpoint's own), as the `Host`
    /// header carries it.
    func authority(host: String) -> String {
        port.map { "\(host):\($0)" } ?? host
    }

    var scheme: String { secure ? "https" : "http" }
}
