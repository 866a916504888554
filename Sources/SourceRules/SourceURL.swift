/// A source URL as Flipbook reads it, strictly: `http` or `https`, a host that is a DNS name or
/// an address (IPv4 in any numeric form, IPv6 in brackets), an optional port, and a path and
/// query of visible ASCII. No credentials, no backslashes, no spaces or control bytes, no percent
/// signs in the host, no zone ids. What the fetcher hands to libcurl is ``canonical``, rebuilt from
/// the parts, so the URL the rules judged and the one that is fetched cannot be read differently.
public struct SourceURL: Sendable, Hashable, CustomStringConvertible {
    /// How a URL's host names its destination.
    public enum Host: Sendable, Hashable {
        /// A DNS name, lower case, without a trailing dot.
        case name(String)
        case address(IPAddress)
    }

    /// Why a URL is refused, each a rule of its own (the 422's detail names it).
    public enum Refusal: String, Error, Sendable, CaseIterable {
        case malformed = "malformed-url"
        case scheme = "scheme-not-allowed"
        case credentials = "credentials-in-url"
        case host = "malformed-host"
    }

    /// `http` or `https`.
    public let scheme: String
    public let host: Host
    /// The port connected to (the scheme's default when the URL names none).
    public let port: Int
    /// The path and query as given, starting with `/` (the fragment is dropped).
    public let pathAndQuery: String

    public static let maxLength = 8192

    public init(_ text: String) throws(Refusal) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maxLength else { throw .malformed }
        // Visible ASCII only: no spaces, controls, DEL or raw non-ASCII; no backslash, which
        // WHATWG parsers read as `/` and others do not.
        guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != 0x5c }) else { throw .malformed }
        guard let colon = bytes.firstIndex(of: 0x3a), bytes[colon...].starts(with: Array("://".utf8)) else {
            throw .malformed
        }
        let scheme = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw scheme.utf8.allSatisfy({ Self.isSchemeByte($0) }) && !scheme.isEmpty ? .scheme : .malformed
        }
        var rest = bytes[(colon + 3)...]
        if let hash = rest.firstIndex(of: 0x23) { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex { $0 == 0x2f || $0 == 0x3f } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var path = String(decoding: rest[authorityEnd...], as: UTF8.self)
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        guard !authority.contains(0x40) else { throw .credentials }  // userinfo@
        let (host, port) = try Self.splitAuthority(authority, scheme: scheme)
        self.scheme = scheme
        self.host = host
        self.port = port
        self.pathAndQuery = path
    }

    /// The URL rebuilt from its parts: what is matched against prefixes and fetched.
    public var canonical: String {
        let defaultPort = scheme == "https" ? 443 : 80
        return scheme + "://" + hostText + (port == defaultPort ? "" : ":\(port)") + pathAndQuery
    }

    public var description: String { canonical }

    /// The host as it appears in ``canonical`` (IPv6 in brackets).
    public var hostText: String {
        switch host {
        case .name(let name): name
        case .address(let address): address.urlHost
        }
    }

    /// The path without its query.
    public var path: Substring { pathAndQuery.prefix { $0 != "?" } }

    /// A redirect's `Location` resolved against this URL (RFC 3986 §5.2, without dot-segment
    /// removal: the server gets the path as the origin wrote it).
    public func resolving(_ location: String) throws(Refusal) -> SourceURL {
        let trimmed = location.trimmingSpaces()
        if let colon = trimmed.firstIndex(of: ":"),
            trimmed[..<colon].utf8.allSatisfy({ Self.isSchemeByte($0) }), !trimmed[..<colon].isEmpty
        {
            return try SourceURL(trimmed)
        }
        let origin = scheme + "://" + hostText + ":\(port)"
        if trimmed.hasPrefix("//") { return try SourceURL(scheme + ":" + trimmed) }
        if trimmed.hasPrefix("/") { return try SourceURL(origin + trimmed) }
        if trimmed.hasPrefix("?") { return try SourceURL(origin + path + trimmed) }
        if trimmed.isEmpty { return self }
        let directory = path.lastIndex(of: "/").map { path[...$0] } ?? "/"
        return try SourceURL(origin + directory + trimmed)
    }

    static func splitAuthority(_ authority: ArraySlice<UInt8>, scheme: String) throws(Refusal) -> (Host, Int) {
        var hostBytes = authority
        var portBytes: ArraySlice<UInt8>? = nil
        if authority.first == 0x5b {  // [IPv6]
            guard let close = authority.firstIndex(of: 0x5d) else { throw .host }
            hostBytes = authority[...close]
            let after = authority[(close + 1)...]
            if !after.isEmpty {
                guard after.first == 0x3a else { throw .host }
                portBytes = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: 0x3a) {
            hostBytes = authority[..<colon]
            portBytes = authority[(colon + 1)...]
        }
        var port = scheme == "https" ? 443 : 80
        if let portBytes {
            guard (1...5).contains(portBytes.count), portBytes.allSatisfy({ $0 &- 0x30 < 10 }),
                let value = Int(String(decoding: portBytes, as: UTF8.self)), (1...65535).contains(value)
            else { throw .malformed }
            port = value
        }
        return (try parseHost(String(decoding: hostBytes, as: UTF8.self)), port)
    }

    static func parseHost(_ text: String) throws(Refusal) -> Host {
        guard !text.isEmpty, text.utf8.count <= 255 else { throw .host }
        if text.hasPrefix("[") {
            guard text.hasSuffix("]"), let address = IPv6Literal.parse(text.dropFirst().dropLast()) else { throw .host }
            return .address(address)
        }
        let lower = text.lowercased()
        if IPv4Literal.looksNumeric(Substring(lower)) {
            guard let value = IPv4Literal.parse(Substring(lower)) else { throw .host }
            return .address(.v4(value))
        }
        var name = Substring(lower)
        if name.hasSuffix(".") { name = name.dropLast() }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard name.utf8.count <= 253,
            labels.allSatisfy({ label in
                (1...63).contains(label.utf8.count) && label.utf8.allSatisfy(isHostByte)
                    && label.utf8.first != 0x2d && label.utf8.last != 0x2d
            })
        else { throw .host }
        return .name(String(name))
    }

    /// Letters, digits, `-` and `_` (some real hosts have underscores).
    static func isHostByte(_ byte: UInt8) -> Bool {
        byte &- 0x61 < 26 || byte &- 0x30 < 10 || byte == 0x2d || byte == 0x5f
    }

    static func isSchemeByte(_ byte: UInt8) -> Bool {
        (byte | 0x20) &- 0x61 < 26 || byte &- 0x30 < 10 || byte == 0x2b || byte == 0x2d || byte == 0x2e
    }
}

extension String {
    func trimmingSpaces() -> String {
        let utf8 = Array(self.utf8)
        guard let first = utf8.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }),
            let last = utf8.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })
        else { return "" }
        return String(decoding: utf8[first...last], as: UTF8.self)
    }
}
