import AnimatedImage
import HTTPServer
import Synchronization

/// How many costly frame encodes (AVIF: about 17× a WebP frame's CPU) each client has under way,
/// bounded by `limits.avifFramesPerClient`: a client asking for every frame of a long animation
/// at once takes that many encode slots and is answered 429 beyond them, so the decode threads
/// stay shared with everyone else. Clients are told apart by ``ClientAddresses``. A slot is
/// held from the request that starts an encode until its answer is ready; cached frames take
/// none. Both frame routes count here: a stored image's (``FrameRoutes``) and an upload
/// session's (``UploadFrameRoutes``, whose request holds its slot while it waits for its bytes
/// too).
final class ClientEncodeLimit: Sendable {
    /// The most encodes one client may have under way; 0 for no limit.
    let perClient: Int
    /// How a request's client is told.
    let clients: ClientAddresses
    private let counts = Mutex<[String: Int]>([:])

    init(perClient: Int, clients: ClientAddresses = ClientAddresses(trustedProxies: [])) {
        self.perClient = perClient
        self.clients = clients
    }

    /// The client whose slot a request for a frame in `format` takes: for AVIF its client
    /// (``ClientAddresses``), for any other format nil (it takes no slot).
    func client(of request: HTTPRequest, format: FrameFormat) -> String? {
        format == .avif ? clients.client(peer: request.remoteAddress, headers: request.headers) : nil
    }

    /// Takes a slot for `client`: false when it holds ``perClient`` already (then nothing is
    /// taken). Always true without a limit or without a known client.
    func acquire(_ client: String?) -> Bool {
        guard perClient > 0, let client else { return true }
        return counts.withLock { counts in
            let held = counts[client, default: 0]
            guard held < perClient else { return false }
            counts[client] = held + 1
            return true
        }
    }

    /// Gives back a slot ``acquire(_:)`` took for `client`.
    func release(_ client: String?) {
        guard perClient > 0, let client else { return }
        counts.withLock { counts in
            let held = counts[client, default: 0]
            counts[client] = held > 1 ? held - 1 : nil
        }
    }

    /// The slots `client` holds now.
    func held(by client: String) -> Int {
        counts.withLock { $0[client, default: 0] }
    }

    /// Takes a slot for `client` (nil: not an AVIF frame; then nothing is taken): nil when taken,
    /// else the 429 with `Retry-After` that says why, with `extra` headers.
    func refusal(_ client: String?, extra: HTTPHeaders = [:]) -> HTTPResponse? {
        guard let client, !acquire(client) else { return nil }
        var headers = extra
        headers.add(name: "Retry-After", value: "1")
        return .problem(
            .tooManyRequests,
            detail: "This client has \(perClient) AVIF frames being encoded already "
                + "(limits.avifFramesPerClient); retry shortly, or ask for format=webp, which costs far less to make.",
            headers: headers)
    }

    /// `responder`, giving `client`'s slot back (``release(_:)``) with the first response it
    /// sends; `responder` itself when `client` is nil (no slot taken).
    func releasing(_ client: String?, _ responder: HTTPResponder) -> HTTPResponder {
        guard let client, perClient > 0 else { return responder }
        let slot = HeldSlot()
        return HTTPResponder { [self] response in
            if slot.giveBack() { release(client) }
            responder.respond(response)
        }
    }
}

/// One slot of a ``ClientEncodeLimit`` held by a request: given back once, however many times
/// its responder is called.
private final class HeldSlot: Sendable {
    private let givenBack = Atomic<Bool>(false)

    /// True the first time only.
    func giveBack() -> Bool { !givenBack.exchange(true, ordering: .acquiringAndReleasing) }
}
