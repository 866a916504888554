/// The IP address and port of the peer of a connection.
public struct HTTPPeerAddress: Hashable, Sendable, CustomStringConvertible {
    /// The numeric IP address (`127.0.0.1`, `::1`).
    public var ip: String
    /// The peer's TCP port.
    public var port: Int

    /// An address from its parts.
    public init(ip: String, port: Int) {
        self.ip = ip
        self.port = port
    }

    public var description: String { ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)" }
}

/// The values a route pattern's `:name` segments matched, in pattern order.
///
/// Bound by the router, they are ranges of the request head's bytes (its raw path's segments),
/// percent-decoded only when a value is asked for (and copied only when it has a `%`): binding
/// them allocates nothing.
public struct HTTPPathParameters: Sendable, Sequence {
    private enum Storage: Sendable {
        /// Given as decoded pairs (tests of handlers, the router's OPTIONS answer).
        case pairs([(name: String, value: String)])
        /// Bound by the router: the route's parameter names and, for each, a range of offsets into
        /// `bytes` (the head's, raw); the first two inline, any further ones in `rest`; `plain`
        /// when the path has no `%` (``RawTarget/pathIsPlain``: no value needs decoding).
        case bound(
            names: [String], bytes: [UInt8], first: Range<Int>, second: Range<Int>, rest: [Range<Int>], plain: Bool)
    }

    private var storage: Storage

    /// Parameters from name/value pairs (for tests of handlers).
    public init(_ pairs: [(name: String, value: String)] = []) { storage = .pairs(pairs) }

    /// Parameters bound by the router: `names[i]`'s value is the offsets `ranges[i]` of `bytes`,
    /// still percent-encoded (none has a `%` when `plain`). `ranges` has as many elements as `names`.
    init(names: [String], bytes: [UInt8], ranges: UnsafeBufferPointer<Range<Int>>, plain: Bool = false) {
        guard !names.isEmpty else {
            storage = .pairs([])
            return
        }
        storage = .bound(
            names: names, bytes: bytes, first: ranges[0], second: ranges.count > 1 ? ranges[1] : 0..<0,
            rest: ranges.count > 2 ? Array(ranges[2...]) : [], plain: plain)
    }

    /// The percent-decoded value of the parameter called `name`.
    public subscript(name: String) -> String? {
        switch storage {
        case .pairs(let pairs):
            for pair in pairs where pair.name == name { return pair.value }
            return nil
        case .bound(let names, let bytes, let first, let second, let rest, _):
            guard let position = Self.position(of: name, in: names) else { return nil }
            let range = position == 0 ? first : position == 1 ? second : rest[position - 2]
            return Self.decoded(bytes, range)
        }
    }

    /// The value of the parameter called `name` as a non-negative decimal number — digits only
    /// (once percent-decoded), at most 18 of them — or nil. Read from the path's bytes, without
    /// making a `String`, when the value has no `%`.
    public func nonNegativeInteger(_ name: String) -> Int? {
        guard case .bound(let names, let head, let first, let second, let rest, let plain) = storage else {
            return self[name].flatMap(Self.nonNegativeInteger)
        }
        guard let position = Self.position(of: name, in: names) else { return nil }
        let range = position == 0 ? first : position == 1 ? second : rest[position - 2]
        return head.withUnsafeBytes { all in
            let bytes = UnsafeRawBufferPointer(rebasing: all[range])
            if !plain, ByteSearch.firstOffset(of: 0x25, in: bytes) != nil {
                return Self.nonNegativeInteger(RequestTarget.percentDecode(bytes))
            }
            return Self.nonNegativeInteger(bytes)
        }
    }

    /// Calls `body` with the UTF-8 bytes of the parameter called `name` as the path holds them,
    /// when they need no decoding (no `%`) — read in place, no `String` made: for a handler that
    /// looks the value up by its bytes. Returns false, without calling `body`, when there is no
    /// such parameter or it has a `%` (then ask ``subscript(_:)``). For parameters given as
    /// pairs, `body` gets the value's bytes.
    public func withUndecodedValue(_ name: String, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        guard case .bound(let names, let head, let first, let second, let rest, let plain) = storage else {
            guard var value = self[name] else { return false }
            value.withUTF8 { body(UnsafeRawBufferPointer($0)) }
            return true
        }
        guard let position = Self.position(of: name, in: names) else { return false }
        let range = position == 0 ? first : position == 1 ? second : rest[position - 2]
        return head.withUnsafeBytes { all in
            let bytes = UnsafeRawBufferPointer(rebasing: all[range])
            guard plain || ByteSearch.firstOffset(of: 0x25, in: bytes) == nil else { return false }
            body(bytes)
            return true
        }
    }

    private static func nonNegativeInteger(_ text: String) -> Int? {
        var text = text
        return text.withUTF8 { nonNegativeInteger(UnsafeRawBufferPointer($0)) }
    }

    private static func nonNegativeInteger(_ digits: UnsafeRawBufferPointer) -> Int? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value = 0
        for digit in digits {
            guard digit &- 0x30 < 10 else { return nil }
            value = value * 10 + Int(digit &- 0x30)
        }
        return value
    }

    /// Where `name` is among `names`: lengths compared first, so that no two different strings are
    /// compared character by character.
    private static func position(of name: String, in names: [String]) -> Int? {
        let length = name.utf8.count
        return names.firstIndex { $0.utf8.count == length && $0 == name }
    }

    /// The number of parameters.
    public var count: Int {
        switch storage {
        case .pairs(let pairs): return pairs.count
        case .bound(let names, _, _, _, _, _): return names.count
        }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        switch storage {
        case .pairs(let pairs):
            return pairs.makeIterator()
        case .bound(let names, let bytes, let first, let second, let rest, _):
            let ranges = [first, second] + rest
            return names.indices.map { (names[$0], Self.decoded(bytes, ranges[$0])) }.makeIterator()
        }
    }

    private static func decoded(_ bytes: [UInt8], _ range: Range<Int>) -> String {
        bytes.withUnsafeBytes { RequestTarget.percentDecode(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }
}

/// A request as a handler sees it: the parsed head, routing results, the body (for collecting
/// routes) and where it came from.
public struct HTTPRequest: Sendable {
    /// The parsed head — method, target (bytes of the head), version, fields — moved into the
    /// request whole: made from the head's fields, the request retained each of their references
    /// and the head released them when it was destroyed.
    @usableFromInline
    package var head: HTTPRequestHead
    /// The request method. HEAD requests reach GET routes with `method == .HEAD`.
    @inlinable
    public var method: HTTPMethod {
        get { head.method }
        set { head.method = newValue }
    }
    /// The request target exactly as sent: a `String` made when read (the request keeps the
    /// target as bytes of its head).
    public var target: String { rawTarget.target }
    /// The path of the target, percent-decoded (`%2F` becomes `/` here; route matching decodes
    /// each segment separately, so a parameter may contain `/`). Decoded when asked for.
    public var path: String {
        get { decodedPath ?? rawTarget.withPath { RequestTarget.percentDecode($0) } }
        set { decodedPath = newValue }
    }
    /// The path as set, or nil while it is the raw path decoded.
    private var decodedPath: String?
    /// The values of the matched route's `:name` segments.
    public var pathParameters: HTTPPathParameters
    /// The decoded query items, in order, duplicates kept (`+` decodes to a space). Decoded from
    /// ``rawQuery`` each time it is read (until set), so a request whose handler never looks at
    /// its query — a cached frame found through a memo of its query — pays nothing for it: read
    /// it once into a local.
    public var queryItems: [(name: String, value: String)] {
        get { assignedQueryItems ?? rawTarget.withQuery { RequestTarget.queryItems($0) } }
        set { assignedQueryItems = newValue }
    }
    /// The query items as set, or nil while they are ``rawQuery`` decoded.
    private var assignedQueryItems: [(name: String, value: String)]?
    /// The query of the target as sent (after `?`, still percent-encoded), nil without a `?`: a
    /// `String` made when read (see ``hasQuery`` and ``withRawQuery(_:)``).
    public var rawQuery: Substring? { rawTarget.rawQuery }
    /// Whether the target has a query of at least one byte (nothing made to tell).
    public var hasQuery: Bool { rawTarget.hasQuery }
    /// Calls `body` with the bytes of ``rawQuery`` (none without a `?`), read in place.
    @inlinable
    package func withRawQuery<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { rawTarget.withQuery(body) }
    /// The header fields, in order; look-up by name is case-insensitive.
    @inlinable
    public var headers: HTTPHeaders {
        get { head.headers }
        set { head.headers = newValue }
        _modify { yield &head.headers }
    }
    /// The protocol version of the request.
    @inlinable
    public var version: HTTPVersion {
        get { head.version }
        set { head.version = newValue }
    }
    /// The whole body for collecting routes; empty for streaming routes and bodiless requests.
    public var body: [UInt8]
    /// The connection's peer, when known.
    public var remoteAddress: HTTPPeerAddress?
    /// A process-unique number of the connection the request came on.
    public var connectionID: UInt64
    /// The 1-based position of this request on its connection.
    public var requestNumber: Int
    /// The index of the event loop handling the request (0 for requests made by hand): per-loop
    /// state of a handler may be picked by it without a lock shared between loops.
    public var loop: Int
    /// The request's id, as the response will carry it (``HTTPServerConfiguration/requestIDHeader``).
    public var requestID: HTTPRequestID
    /// The pattern of the route that matched, e.g. `/frames/:id/:index`.
    public var route: String?

    /// The target, its raw (still percent-encoded) path and its raw query, as bytes of the head.
    @inlinable
    package var rawTarget: RawTarget { head.rawTarget }
    /// Built in place and handed to the handler by address, not copied (``AddressOnly``).
    private let addressOnly = AddressOnly()

    /// Makes a request from a method and target, e.g. to test a handler without a server.
    public init(
        method: HTTPMethod, target: String, version: HTTPVersion = .http1_1,
        headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
        pathParameters: HTTPPathParameters = HTTPPathParameters(),
        remoteAddress: HTTPPeerAddress? = nil, connectionID: UInt64 = 0, requestNumber: Int = 1,
        loop: Int = 0, requestID: HTTPRequestID = .none, route: String? = nil
    ) {
        self.init(
            head: HTTPRequestHead(
                method: method, rawTarget: RawTarget(target), version: version, headers: headers,
                framing: body.isEmpty ? .none : .contentLength(body.count), keepAlive: true, expectsContinue: false),
            pathParameters: pathParameters, body: body, remoteAddress: remoteAddress,
            connectionID: connectionID, requestNumber: requestNumber, loop: loop,
            requestID: requestID, route: route)
    }

    /// The server's initializer: every part already parsed, the head handed over.
    init(
        head: consuming HTTPRequestHead, pathParameters: HTTPPathParameters,
        body: [UInt8], remoteAddress: HTTPPeerAddress?, connectionID: UInt64, requestNumber: Int,
        loop: Int, requestID: HTTPRequestID, route: String?
    ) {
        self.head = head
        self.pathParameters = pathParameters
        self.body = body
        self.remoteAddress = remoteAddress
        self.connectionID = connectionID
        self.requestNumber = requestNumber
        self.loop = loop
        self.requestID = requestID
        self.route = route
    }

    /// The first value of the query item called `name` (the query decoded again on each call).
    public func query(_ name: String) -> String? {
        for item in queryItems where item.name == name { return item.value }
        return nil
    }
}
