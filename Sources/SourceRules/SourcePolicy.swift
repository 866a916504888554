/// The rules a source URL and every address it connects to must pass: `sources.allowedPrefixes`
/// (empty = any host) and `sources.allowedNetworks` (blocks whose non-public addresses are
/// allowed anyway; for development and tests).
public struct SourcePolicy: Sendable {
    /// Why a fetch was refused; the raw value names the rule (in the 422's detail and the
    /// metrics' `reason` label). The resolved address is never part of it.
    public enum Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        case url(SourceURL.Refusal)
        /// The URL matches none of `sources.allowedPrefixes`.
        case prefix
        /// An address of the destination is of a class that is not allowed.
        case address(AddressClass)

        public var rule: String {
            switch self {
            case .url(let refusal): refusal.rawValue
            case .prefix: "prefix-not-allowed"
            case .address(let kind): "address-\(kind.rawValue)"
            }
        }

        public var description: String { rule }
    }

    public let allowedPrefixes: [URLPrefix]
    public let allowedNetworks: [NetworkBlock]

    public init(allowedPrefixes: [URLPrefix] = [], allowedNetworks: [NetworkBlock] = []) {
        self.allowedPrefixes = allowedPrefixes
        self.allowedNetworks = allowedNetworks
    }

    /// Parses the settings' text; the entries that are malformed come back in `invalid`.
    public static func parse(prefixes: [String], networks: [String]) -> (SourcePolicy, invalid: [String]) {
        var invalid: [String] = []
        let p = prefixes.compactMap { text -> URLPrefix? in
            let prefix = URLPrefix(text)
            if prefix == nil { invalid.append(text) }
            return prefix
        }
        let n = networks.compactMap { text -> NetworkBlock? in
            let block = NetworkBlock(text)
            if block == nil { invalid.append(text) }
            return block
        }
        return (SourcePolicy(allowedPrefixes: p, allowedNetworks: n), invalid)
    }

    /// The URL parsed and checked against the prefixes (and, when its host is an address, the
    /// address rules).
    public func check(_ text: String) throws(Refusal) -> SourceURL {
        let url: SourceURL
        do {
            url = try SourceURL(text)
        } catch {
            throw .url(error)
        }
        try check(url)
        return url
    }

    public func check(_ url: SourceURL) throws(Refusal) {
        if !allowedPrefixes.isEmpty, !allowedPrefixes.contains(where: { $0.allows(url) }) { throw .prefix }
        if case .address(let address) = url.host { try check(address) }
    }

    /// Whether a connection may go to `address`.
    public func check(_ address: IPAddress) throws(Refusal) {
        let kind = AddressClass(address)
        if kind == .public { return }
        if allowedNetworks.contains(where: { $0.contains(address) }) { return }
        throw .address(kind)
    }
}
