import HTTPServer
import OutboundHTTP
import SourceRules
import URLSigning

/// What `sources.*` and `security.*` mean once checked: the fetcher's policy and limits, and the
/// signature keys. Malformed entries stop start-up (``SettingsLoader``).
extension FlipbookSettings.Sources {
    /// The fetcher these settings describe; `maxFileBytes` is `limits.maxFileBytes` (the
    /// default of `maxBytes`).
    func fetcher(maxFileBytes: Int, resolver: any SourceResolver = SystemResolver()) -> SourceFetcher {
        let (policy, _) = SourcePolicy.parse(prefixes: allowedPrefixes, networks: allowedNetworks)
        return SourceFetcher(
            policy: policy, maxRedirects: maxRedirects, maxBytes: maxBytes > 0 ? maxBytes : maxFileBytes,
            timeoutSeconds: timeoutSeconds, resolver: resolver)
    }
}

extension FlipbookSettings.Security {
    /// The parsed keys (malformed entries are refused at start-up, so none is dropped here).
    public var signingKeys: [URLSigningKey] { urlKeys.compactMap(URLSigningKey.init) }
}

extension SettingsLoader {
    static func validateSources(_ settings: FlipbookSettings) throws {
        let sources = settings.sources
        let (_, invalid) = SourcePolicy.parse(prefixes: sources.allowedPrefixes, networks: sources.allowedNetworks)
        if let bad = invalid.first {
            throw Failure(
                description:
                    "sources: '\(bad)' is neither an http(s) URL prefix (allowedPrefixes) nor a CIDR block (allowedNetworks)")
        }
        if sources.maxRedirects < 0 { throw Failure(description: "sources.maxRedirects must be ≥ 0") }
        if sources.maxBytes < 0 { throw Failure(description: "sources.maxBytes must be ≥ 0 (0 = limits.maxFileBytes)") }
        if !(sources.timeoutSeconds > 0) { throw Failure(description: "sources.timeoutSeconds must be > 0") }
        if sources.refreshSeconds < 0 { throw Failure(description: "sources.refreshSeconds must be ≥ 0 (0 = off)") }
        // Keys are secrets: the message names the position, never the value.
        for (index, entry) in settings.security.urlKeys.enumerated() where URLSigningKey(entry) == nil {
            throw Failure(description: "security.urlKeys: entry \(index + 1) is not KEY:SALT in hexadecimal")
        }
        for route in settings.security.signedRoutes where !SignedRequestPolicy.routeNames.contains(route) {
            throw Failure(
                description: "security.signedRoutes: '\(route)' is not one of "
                    + SignedRequestPolicy.routeNames.sorted().joined(separator: ", "))
        }
    }
}

extension SourceFetchFailure {
    /// The status a fetch that failed this way answers: 422 for a rule of Flipbook's, 502 for an
    /// origin that failed or could not be reached, 504 for one too slow, 500 when the body could
    /// not be written here.
    var status: HTTPStatus {
        switch self {
        case .refused, .tooManyRedirects, .tooLarge, .contentEncoding: .unprocessableContent
        case .originStatus, .unreachable: .badGateway
        case .timedOut: .gatewayTimeout
        case .storage: .internalServerError
        }
    }
}
