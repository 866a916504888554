import SourceRules

/// One hop of a source fetch — one request, redirects being followed by ``SourceFetcher``, which
/// checks each target first — as the answer arrives: the connection can only go to an address
/// that was checked (libcurl is given the checked addresses for the name, and the address it is
/// about to connect to is checked again — policy and pinned set — so a refused destination never
/// sees a connection attempt); a `Content-Encoding` or an announced size past the limit refuses
/// the answer at its head; a 2xx body is handed on (cut at the limit), a redirect's is dropped
/// (bounded too), any other answer's is not read.
final class SourceHop: OutboundReceiver {
    /// What the hop ended with.
    struct Outcome {
        var status: Int
        var location: String?
        var etag: String?
        var lastModified: String?
    }

    let url: SourceURL
    let pinned: [IPAddress]
    let policy: SourcePolicy
    let maxBytes: Int
    /// Receives the body of a 2xx answer as it arrives.
    private let deliver: (UnsafeRawBufferPointer) throws -> Void

    private var status = 0
    private var headers: [(name: String, value: String)] = []
    private var received = 0
    /// Why the hop was abandoned, when it was on its rules.
    private var failure: SourceFetchFailure?

    init(
        url: SourceURL, pinned: [IPAddress], policy: SourcePolicy, maxBytes: Int,
        deliver: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) {
        self.url = url
        self.pinned = pinned
        self.policy = policy
        self.maxBytes = maxBytes
        self.deliver = deliver
    }

    /// Sends the hop's request through `client` within `timeoutMilliseconds`.
    func run(_ client: OutboundClient, headers requestHeaders: [String], timeoutMilliseconds: Int)
        throws(SourceFetchFailure) -> Outcome
    {
        var resolve: [String] = []
        if case .name(let name) = url.host {
            resolve.append("\(name):\(url.port):" + pinned.map(\.urlHost).joined(separator: ","))
        }
        let request = OutboundRequest(
            method: "GET", url: url.canonical, headers: ["Accept-Encoding: identity"] + requestHeaders,
            timeoutMilliseconds: timeoutMilliseconds, maxBodyBytes: maxBytes, resolve: resolve)
        do {
            _ = try client.perform(request, receiver: self)
        } catch {
            if let failure { throw failure }
            switch error {
            case .timedOut: throw .timedOut(Double(timeoutMilliseconds) / 1000)
            case .tooLarge: throw .tooLarge(maxBytes)
            case .abandoned: throw .unreachable("the transfer was abandoned")
            case .failed(let why): throw .unreachable(why)
            }
        }
        if let failure { throw failure }
        return Outcome(
            status: status, location: header("Location"), etag: header("ETag"), lastModified: header("Last-Modified"))
    }

    private func header(_ name: String) -> String? {
        headers.last { $0.name.lowercased() == name.lowercased() }?.value
    }

    static func isRedirect(_ status: Int) -> Bool { [301, 302, 303, 307, 308].contains(status) }

    /// The connect-time check: the address libcurl is about to connect to must pass the policy
    /// and be one of those checked before the hop started.
    func connecting(to address: IPAddress) -> Bool {
        do {
            try policy.check(address)
        } catch {
            failure = .refused(error)
            return false
        }
        if !pinned.isEmpty, !pinned.contains(address) {
            failure = .unreachable("libcurl chose an address that was not checked")
            return false
        }
        return true
    }

    /// At the end of the head of an answer whose body will be kept: refuses a `Content-Encoding`
    /// and an announced size past the limit.
    func head(status: Int, headers: [(name: String, value: String)]) -> Bool {
        self.status = status
        self.headers = headers
        guard (200..<300).contains(status) else { return true }
        if let coding = header("Content-Encoding"), !coding.isEmpty, coding.lowercased() != "identity" {
            failure = .contentEncoding(coding)
            return false
        }
        if let length = header("Content-Length").flatMap(Int.init), length > maxBytes {
            failure = .tooLarge(maxBytes)
            return false
        }
        return true
    }

    /// Body bytes: kept for a 2xx (cut at the limit), dropped for a redirect (bounded too); any
    /// other answer is not read at all.
    func body(_ bytes: UnsafeRawBufferPointer) -> Bool {
        received += bytes.count
        if (200..<300).contains(status) {
            guard received <= maxBytes else {
                failure = .tooLarge(maxBytes)
                return false
            }
            do {
                try deliver(bytes)
            } catch {
                failure = .storage("\(error)")
                return false
            }
            return true
        }
        if Self.isRedirect(status) { return received <= 64 * 1024 }
        failure = .originStatus(status)
        return false
    }
}
