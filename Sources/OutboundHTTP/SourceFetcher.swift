import SourceRules
import SystemResources

/// Fetches an image from its URL under the rules of `sources.*`: the URL must pass
/// ``SourcePolicy`` (scheme, no credentials, `allowedPrefixes`); every address of its host must
/// pass the address rules, and the connection goes only to those checked addresses (checked again
/// as the socket opens); redirects are followed by hand, at most `maxRedirects`, each target
/// checked the same way; the body is cut at `maxBytes` as it arrives; the whole fetch, every hop
/// and every name lookup included, has `timeoutSeconds`; `Accept-Encoding: identity` is asked and any
/// `Content-Encoding` refused; no cookies and no credentials are ever sent.
public struct SourceFetcher: Sendable {
    /// What a completed fetch found.
    public struct Fetched: Sendable, Equatable {
        /// The URL the body came from (after redirects).
        public var finalURL: String
        /// 200 (a body was delivered) or 304 (the conditional request matched: no body).
        public var status: Int
        public var etag: String?
        public var lastModified: String?
        public var bytes: Int
    }

    /// Validators of the copy Flipbook holds (for a refresh).
    public struct Validators: Sendable, Equatable {
        public var etag: String?
        public var lastModified: String?
        public init(etag: String?, lastModified: String?) {
            self.etag = etag
            self.lastModified = lastModified
        }
    }

    /// Every hop's connection is its own, made for the addresses checked for it.
    private static let client = OutboundClient(reuseConnections: false)

    public let policy: SourcePolicy
    public let maxRedirects: Int
    public let maxBytes: Int
    public let timeoutSeconds: Double
    public let resolver: any SourceResolver

    public init(
        policy: SourcePolicy, maxRedirects: Int = 3, maxBytes: Int, timeoutSeconds: Double = 10,
        resolver: any SourceResolver = SystemResolver()
    ) {
        self.policy = policy
        self.maxRedirects = maxRedirects
        self.maxBytes = maxBytes
        self.timeoutSeconds = timeoutSeconds
        self.resolver = resolver
    }

    /// Fetches `text`, handing the body to `body` as it arrives (nothing is handed over for a
    /// 304). Slow: call it off the event loops.
    public func fetch(
        _ text: String, validators: Validators? = nil, body: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) throws(SourceFetchFailure) -> Fetched {
        let clock = SystemMonotonicClock()
        let deadline = clock.nanoseconds() + Int64(timeoutSeconds * 1e9)
        var url: SourceURL
        do {
            url = try policy.check(text)
        } catch {
            throw .refused(error)
        }
        var headers: [String] = ["Accept: image/gif, image/png, image/apng, image/webp, image/*;q=0.8"]
        if let etag = validators?.etag { headers.append("If-None-Match: \(etag)") }
        if let lastModified = validators?.lastModified { headers.append("If-Modified-Since: \(lastModified)") }
        var delivered = 0
        func remainingMilliseconds() -> Int { Int((deadline - clock.nanoseconds()) / 1_000_000) }
        for hop in 0...maxRedirects {
            let pinned = try addresses(of: url, withinMilliseconds: remainingMilliseconds())
            let remaining = remainingMilliseconds()
            guard remaining > 0 else { throw .timedOut(timeoutSeconds) }
            let receiver = SourceHop(url: url, pinned: pinned, policy: policy, maxBytes: maxBytes) { chunk in
                delivered += chunk.count
                try body(chunk)
            }
            let outcome: SourceHop.Outcome
            do throws(SourceFetchFailure) {
                outcome = try receiver.run(Self.client, headers: headers, timeoutMilliseconds: remaining)
            } catch {
                if case .timedOut = error { throw .timedOut(timeoutSeconds) }
                throw error
            }
            if SourceHop.isRedirect(outcome.status), let location = outcome.location {
                guard hop < maxRedirects else { throw .tooManyRedirects(maxRedirects) }
                do {
                    url = try url.resolving(location)
                    try policy.check(url)
                } catch let refusal as SourceURL.Refusal {
                    throw .refused(.url(refusal))
                } catch let refusal as SourcePolicy.Refusal {
                    throw .refused(refusal)
                } catch {
                    throw .unreachable("a redirect could not be followed")
                }
                continue
            }
            switch outcome.status {
            case 200..<300, 304:
                return Fetched(
                    finalURL: url.canonical, status: outcome.status == 304 ? 304 : 200, etag: outcome.etag,
                    lastModified: outcome.lastModified, bytes: delivered)
            default:
                throw .originStatus(outcome.status)
            }
        }
        throw .tooManyRedirects(maxRedirects)
    }

    /// The addresses a hop may connect to, every one checked: the host's own for an address
    /// literal, else those of all the resolver gives that pass the address rules. The connection
    /// is pinned to these; a refused address is never connected to (`localhost` resolving to
    /// `::1` and `127.0.0.1` with only `127.0.0.0/8` allowed connects to `127.0.0.1`), and a name
    /// none of whose addresses passes is refused with the first refusal. The lookup counts
    /// against the fetch's deadline: one that does not answer within `milliseconds` times out.
    func addresses(of url: SourceURL, withinMilliseconds milliseconds: Int) throws(SourceFetchFailure) -> [IPAddress] {
        let found: [IPAddress]
        switch url.host {
        case .address(let address): found = [address]
        case .name(let name):
            guard
                let answer = BoundedLookup.addresses(of: name, using: resolver, withinMilliseconds: milliseconds)
            else { throw .timedOut(timeoutSeconds) }
            found = answer
        }
        guard !found.isEmpty else { throw .unreachable("the host name does not resolve") }
        var passed: [IPAddress] = []
        var firstRefusal: SourcePolicy.Refusal? = nil
        for address in found {
            do {
                try policy.check(address)
                passed.append(address)
            } catch {
                if firstRefusal == nil { firstRefusal = error }
            }
        }
        if passed.isEmpty, let firstRefusal { throw .refused(firstRefusal) }
        return passed
    }
}
