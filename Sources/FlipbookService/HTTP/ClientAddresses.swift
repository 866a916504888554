import HTTPServer

/// Who a request comes from: the peer's address, or — when the peer is one of
/// `server.trustedProxies` — the nearest untrusted hop of `X-Forwarded-For` (walking right to
/// left past other trusted proxies). The access log names clients by it, and per-client limits
/// count by it.
struct ClientAddresses: Sendable {
    let trustedProxies: [IPAddressRange]

    /// The client of a request from `peer` with `headers`; nil when the peer is not known.
    func client(peer: HTTPPeerAddress?, headers: HTTPHeaders) -> String? {
        guard let peer = peer?.ip else { return nil }
        guard !trustedProxies.isEmpty, isTrusted(peer) else { return peer }
        let hops = headers.values(for: "X-Forwarded-For")
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingSpaces() }
            .filter { !$0.isEmpty }
        guard let client = hops.last(where: { !isTrusted($0) }) ?? hops.first else { return peer }
        return IPAddressRange.parse(client) != nil ? client : peer
    }

    func isTrusted(_ address: String) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }
}
