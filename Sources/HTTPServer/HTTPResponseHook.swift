/// Sees every response a server sends, whichever part of the server made it — a handler, the
/// router's 404 and 405, the parser's 400, 408, 413, 414, 431, 501 and 505, and the 503 given to
/// a connection over the limit — so that headers every response must carry, the access log and
/// request metrics live in one place.
///
/// All calls happen on the event-loop thread that owns the connection (``HTTPAccessRecord/loop``
/// says which), one at a time per loop: per-loop state needs no lock against other loops.
/// Keep the calls short; they are on the path of every response. A class: the server reads its
/// hook for every response, and a class reference is copied with one retain.
public protocol HTTPResponseHook: AnyObject, Sendable {
    /// Header lines every response carries, as `Name: value\r\n` bytes (e.g. `X-Served-By`).
    /// Read once, when the server is made.
    var constantHeaderLines: [UInt8] { get }

    /// Appends header lines that depend on the request (for instance CORS headers for an allowed
    /// `Origin`) as `Name: value\r\n` bytes, to the head about to be sent. The default adds none.
    func appendHeaderLines(for record: HTTPAccessRecord, to head: inout [UInt8])

    /// Whether ``appendHeaderLines(for:to:)`` may add anything; when false the server does not
    /// call it (nor keeps the record for it). Read once, when the server is made. The default is
    /// true.
    var appendsHeaderLines: Bool { get }

    /// The response has been queued for the socket: log it, count it. The record is handed over
    /// (not copied): keep it, or parts of it, without a retain of each of its fields.
    func responseQueued(_ record: consuming HTTPAccessRecord)
}

extension HTTPResponseHook {
    public var constantHeaderLines: [UInt8] { [] }

    public func appendHeaderLines(for record: HTTPAccessRecord, to head: inout [UInt8]) {}

    public var appendsHeaderLines: Bool { true }
}

/// What the server knows about one response when it hands it to its ``HTTPResponseHook``.
public struct HTTPAccessRecord: Sendable {
    /// The request method (`-` when the request line could not be parsed).
    public var method: HTTPMethod
    /// The request target's decoded path (`-` when the request line could not be parsed).
    /// Decoded when asked for.
    public var path: String {
        get { decodedPath ?? target.withPath { RequestTarget.percentDecode($0) } }
        set { decodedPath = newValue }
    }
    /// Calls `body` with the UTF-8 bytes of ``path``: the raw path's own bytes when it has no
    /// `%` (nothing to decode, no copy), else the decoded path's.
    public func withPathUTF8<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        withPathBytes { bytes, _ in body(bytes) }
    }

    /// Calls `body` with the UTF-8 bytes of ``path`` (those of ``withPathUTF8(_:)``) and whether
    /// they are known to be visible ASCII (`!`–`~`) only: the raw path of a request line the
    /// server's parser accepted, with nothing to decode. A log line copies such bytes as they are,
    /// without looking for bytes to escape; a path set or decoded is never taken for clean.
    /// Inlined where it is called (the access log, in another module), so that the usual path —
    /// the raw path with no `%` — calls `body` directly, not through a generic closure.
    @inlinable
    public func withPathBytes<R>(_ body: (UnsafeRawBufferPointer, _ visibleASCII: Bool) -> R) -> R {
        if decodedPath == nil {
            // A parsed path known to have no `%` is not searched again (``RawTarget/pathIsPlain``).
            if target.pathIsPlain { return target.withPath { body($0, true) } }
            let clean: R? = target.withPath { bytes in Self.hasNoEscape(bytes) ? body(bytes, true) : nil }
            if let clean { return clean }
        }
        return withDecodedPathBytes(body)
    }

    /// Whether `bytes` hold no `%`.
    @usableFromInline
    static func hasNoEscape(_ bytes: UnsafeRawBufferPointer) -> Bool { ByteSearch.firstOffset(of: 0x25, in: bytes) == nil }

    /// ``withPathBytes(_:)`` for a path set, or one with escapes (decoded first).
    @usableFromInline
    func withDecodedPathBytes<R>(_ body: (UnsafeRawBufferPointer, _ visibleASCII: Bool) -> R) -> R {
        if let decodedPath {
            var text = decodedPath
            return text.withUTF8 { body(UnsafeRawBufferPointer($0), false) }
        }
        return target.withPath { bytes in
            guard ByteSearch.firstOffset(of: 0x25, in: bytes) != nil else { return body(bytes, true) }
            var decoded = RequestTarget.percentDecode(bytes)
            return decoded.withUTF8 { body(UnsafeRawBufferPointer($0), false) }
        }
    }

    /// An upper bound of `path.utf8.count` found without decoding (decoding never lengthens).
    public var pathByteCountBound: Int { decodedPath?.utf8.count ?? target.pathByteCount }
    /// The path as set, or nil while it is the target's raw path decoded.
    @usableFromInline var decodedPath: String?
    /// The request target, for its raw (percent-encoded) path: the server's records get it from a
    /// request line its parser accepted (visible ASCII only), or `-`.
    @usableFromInline var target: RawTarget
    /// The pattern of the route that answered (`/frames/:id/:index`); nil when no route matched
    /// (404, 405) or the request never reached the router (parser errors, the 503 at the limit).
    public var route: String?
    /// The position of that route among the router's routes (``Router/patterns``); -1 for none.
    public var routeIndex: Int
    /// The request's header fields (empty when the head was not parsed).
    public var requestHeaders: HTTPHeaders
    /// The id the response carries in the server's request-id header (``HTTPRequestID/none``
    /// when the server has none configured).
    public var requestID: HTTPRequestID
    /// The connection's peer.
    public var remoteAddress: HTTPPeerAddress?
    /// A process-unique number of the connection (0 for a connection refused at the limit).
    public var connectionID: UInt64
    /// The index of the event loop that served it.
    public var loop: Int
    /// The response status code.
    public var status: Int
    /// The number of body bytes sent (0 for HEAD, 204 and 304).
    public var bodyBytes: Int
    /// From the start of the event-loop turn that parsed the request head (for a failed one: the
    /// turn that found it wrong) to the response being handed to the socket: the time the request
    /// waited behind others parsed in the same turn is in it.
    public var duration: Duration {
        get { .nanoseconds(durationNanoseconds) }
        set {
            let (seconds, attoseconds) = newValue.components
            durationNanoseconds = seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
        }
    }
    /// ``duration`` in nanoseconds, as the server measured it (reading it needs no 128-bit
    /// arithmetic).
    public private(set) var durationNanoseconds: Int64
    /// Built in place and handed to the hook by address, not copied (``AddressOnly``).
    private let addressOnly = AddressOnly()

    /// A record from its parts (the server makes them; tests of hooks make their own).
    public init(
        method: HTTPMethod, path: String, route: String?, routeIndex: Int, requestHeaders: HTTPHeaders,
        requestID: HTTPRequestID, remoteAddress: HTTPPeerAddress?, connectionID: UInt64, loop: Int,
        status: Int, bodyBytes: Int, duration: Duration
    ) {
        self.init(
            method: method, target: Connection.unknownTarget, route: route, routeIndex: routeIndex,
            requestHeaders: requestHeaders,
            requestID: requestID, remoteAddress: remoteAddress, connectionID: connectionID, loop: loop,
            status: status, bodyBytes: bodyBytes, durationNanoseconds: 0)
        decodedPath = path
        self.duration = duration
    }

    /// A record whose raw path is `rawPath` (decoded only if read), for tests.
    init(
        method: HTTPMethod, rawPath: Substring, route: String?, routeIndex: Int, requestHeaders: HTTPHeaders,
        requestID: HTTPRequestID, remoteAddress: HTTPPeerAddress?, connectionID: UInt64, loop: Int,
        status: Int, bodyBytes: Int, durationNanoseconds: Int64
    ) {
        self.init(
            method: method, target: RawTarget(rawPath: rawPath), route: route, routeIndex: routeIndex,
            requestHeaders: requestHeaders, requestID: requestID, remoteAddress: remoteAddress,
            connectionID: connectionID, loop: loop, status: status, bodyBytes: bodyBytes,
            durationNanoseconds: durationNanoseconds)
    }

    /// Completes a record the server made when the request's head was parsed (status 0 until
    /// then) with what its response says.
    mutating func complete(status: Int, bodyBytes: Int, durationNanoseconds: Int64) {
        self.status = status
        self.bodyBytes = bodyBytes
        self.durationNanoseconds = durationNanoseconds
    }

    /// The server's record of a request whose target is `target` (its path decoded only if read).
    /// Not inlined, so that it is made in place where the server keeps it, in the exchange of its
    /// request (inlined, it was built, copied and the first destroyed: a retain and a release of
    /// each field).
    @inline(never)
    init(
        method: HTTPMethod, target: RawTarget, route: String?, routeIndex: Int, requestHeaders: HTTPHeaders,
        requestID: HTTPRequestID, remoteAddress: HTTPPeerAddress?, connectionID: UInt64, loop: Int,
        status: Int, bodyBytes: Int, durationNanoseconds: Int64
    ) {
        self.method = method
        self.target = target
        decodedPath = nil
        self.route = route
        self.routeIndex = routeIndex
        self.requestHeaders = requestHeaders
        self.requestID = requestID
        self.remoteAddress = remoteAddress
        self.connectionID = connectionID
        self.loop = loop
        self.status = status
        self.bodyBytes = bodyBytes
        self.durationNanoseconds = durationNanoseconds
    }
}
