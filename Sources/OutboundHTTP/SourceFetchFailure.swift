import SourceRules

/// Why fetching a source failed: a rule of Flipbook's refused it (naming the rule, never the
/// resolved address), the origin could not be reached or failed, or it was too slow.
/// ``reason`` is the `reason` label of `flipbook_source_fetches_total`; the service answers each
/// with its status (422, 502, 504).
public enum SourceFetchFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case refused(SourcePolicy.Refusal)
    case tooManyRedirects(Int)
    /// The body passed `sources.maxBytes` (announced or as it arrived).
    case tooLarge(Int)
    /// The answer had a `Content-Encoding` (Flipbook asks for `identity` and decompresses nothing).
    case contentEncoding(String)
    /// The origin answered with a status other than 2xx, 304 or a followed redirect.
    case originStatus(Int)
    /// No connection, a reset, a TLS failure, a name that does not resolve.
    case unreachable(String)
    case timedOut(Double)
    /// Writing the body locally failed.
    case storage(String)

    public var reason: String {
        switch self {
        case .refused(let refusal): refusal.rule
        case .tooManyRedirects: "too-many-redirects"
        case .tooLarge: "too-large"
        case .contentEncoding: "content-encoding"
        case .originStatus: "origin-status"
        case .unreachable: "unreachable"
        case .timedOut: "timeout"
        case .storage: "storage"
        }
    }

    public var description: String {
        switch self {
        case .refused(.url(let why)):
            "The source URL is refused (\(why.rawValue)): only http(s) URLs without credentials and with a well-formed host are fetched."
        case .refused(.prefix): "The source URL is refused (prefix-not-allowed): it matches none of sources.allowedPrefixes."
        case .refused(.address(let kind)):
            "The source is refused (address-\(kind.rawValue)): its host's address is of the class '\(kind.rawValue)', which only sources.allowedNetworks could allow."
        case .tooManyRedirects(let limit):
            "The source is refused (too-many-redirects): more than sources.maxRedirects (\(limit)) redirects."
        case .tooLarge(let limit): "The source is refused (too-large): its body exceeds sources.maxBytes (\(limit) bytes)."
        case .contentEncoding(let coding):
            "The source is refused (content-encoding): the origin answered with Content-Encoding '\(coding)'; only identity is accepted."
        case .originStatus(let status): "The origin answered \(status)."
        case .unreachable(let why): "The origin cannot be reached: \(why)."
        case .timedOut(let seconds): "The origin did not deliver the source within sources.timeoutSeconds (\(seconds) s)."
        case .storage: "The source could not be written to storage."
        }
    }
}
