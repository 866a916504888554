/// One entry of `sources.allowedPrefixes`, matched by the parts of a parsed URL, never by string
/// prefix: `https://example.com` allows `https://example.com/a.gif` but not
/// `https://example.com.evil.net/` (another host) nor `https://example.com@evil.net/` (refused
/// anyway: credentials). The scheme, host and port must be equal; the path must start with the
/// prefix's path at a segment boundary (`/gifs` allows `/gifs/a.gif` and `/gifs?x`, not `/gifsx`).
public struct URLPrefix: Sendable, Hashable, CustomStringConvertible {
    public let url: SourceURL

    /// nil when `text` is not a source URL (with no query).
    public init?(_ text: String) {
        guard let url = try? SourceURL(text), !url.pathAndQuery.contains("?") else { return nil }
        self.url = url
    }

    public func allows(_ candidate: SourceURL) -> Bool {
        guard candidate.scheme == url.scheme, candidate.host == url.host, candidate.port == url.port else {
            return false
        }
        let prefix = url.pathAndQuery
        let path = candidate.pathAndQuery
        guard path.hasPrefix(prefix) else { return false }
        if prefix.hasSuffix("/") || path.utf8.count == prefix.utf8.count { return true }
        let next = path.utf8[path.utf8.index(path.utf8.startIndex, offsetBy: prefix.utf8.count)]
        return next == 0x2f || next == 0x3f
    }

    public var description: String { url.canonical }
}
