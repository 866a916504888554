/// Maps method and path to a handler. Patterns are `/`-separated literals and `:name` parameters,
/// e.g. `/frames/:id/:index`. Unknown paths answer 404 and known paths with another method 405
/// with `Allow`, both as problem documents unless `notFoundResponse`/`methodNotAllowedResponse`
/// are replaced. Every GET route also answers HEAD (same head, no body).
///
/// Build the router completely before handing it to `HTTPServer`; it is a value and is not
/// changed afterwards.
public struct Router: Sendable {
    /// Answers a request whose body (if any) has been collected: `.now(response)` or `.later`.
    public typealias Handler = @Sendable (HTTPRequest, HTTPResponder) -> HTTPHandlerResult
    /// Makes the sink that receives one request's streamed body; the responder answers the
    /// request once the sink's `finish()` returns `.later`.
    public typealias SinkFactory = @Sendable (HTTPRequest, HTTPResponder) -> any HTTPBodySink

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    enum Action: Sendable {
        case collect(Handler)
        case stream(SinkFactory)
    }

    /// A registered route (a class, so that matching looks routes up without copying them).
    /// Never changed once made; its literals are kept in buffers of its own, freed with it.
    final class Route: @unchecked Sendable {
        let method: HTTPMethod
        /// The pattern as registered, e.g. `/frames/:id/:index`.
        let pattern: String
        /// The route's position in ``Router/patterns``.
        let index: Int
        let segments: [Segment]
        /// The names of the `:name` segments, in order.
        let parameterNames: [String]
        /// For each segment, where its literal's UTF-8 bytes are in ``literalBytes`` (nil for a
        /// parameter): matching compares bytes without copying a `Segment` and its string. In a
        /// buffer, not an array: an array read out of a route was retained for the read.
        let literalRanges: UnsafeMutableBufferPointer<Range<Int>?>
        /// The UTF-8 bytes of the literal segments, one after the other.
        let literalBytes: UnsafeMutableRawBufferPointer
        /// The UTF-8 bytes of the first segment when it is a literal (``RouteGroups`` groups by it).
        let firstLiteral: [UInt8]?
        let maxBodyBytes: Int?
        let action: Action
        /// The handler of a `collect` route (``action``'s), and whether it is one: a closure kept
        /// apart from the enum is called where the route holds it; bound out of ``action``, it
        /// was retained for the call and released after. A `stream` route's is never called.
        let collectHandler: Handler
        let collects: Bool

        init(method: HTTPMethod, pattern: String, index: Int, segments: [Segment], maxBodyBytes: Int?, action: Action) {
            self.method = method
            self.pattern = pattern
            self.index = index
            self.segments = segments
            parameterNames = segments.compactMap { if case .parameter(let name) = $0 { name } else { nil } }
            var bytes: [UInt8] = []
            let ranges = segments.map { segment -> Range<Int>? in
                guard case .literal(let literal) = segment else { return nil }
                let start = bytes.count
                bytes.append(contentsOf: literal.utf8)
                return start..<bytes.count
            }
            let rangeBuffer = UnsafeMutableBufferPointer<Range<Int>?>.allocate(capacity: ranges.count)
            _ = rangeBuffer.initialize(from: ranges)
            literalRanges = rangeBuffer
            let byteBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
            bytes.withUnsafeBytes { byteBuffer.copyMemory(from: $0) }
            literalBytes = byteBuffer
            firstLiteral = ranges.first.flatMap { $0 }.map { Array(bytes[$0]) }
            self.maxBodyBytes = maxBodyBytes
            self.action = action
            if case .collect(let handler) = action {
                (collectHandler, collects) = (handler, true)
            } else {
                (collectHandler, collects) = ({ _, _ in .later }, false)
            }
        }

        deinit {
            literalRanges.deallocate()
            literalBytes.deallocate()
        }
    }

    enum Match {
        case found(Route, HTTPPathParameters)
        case methodNotAllowed([HTTPMethod])
        case notFound
    }

    private(set) var routes: [Route] = []

    /// The patterns of the routes, in the order they were registered; a route's position here is
    /// ``HTTPAccessRecord/routeIndex``.
    public var patterns: [String] { routes.map(\.pattern) }

    /// Builds the 404 answer; defaults to a problem document naming the path.
    public var notFoundResponse: @Sendable (HTTPRequest) -> HTTPResponse = { request in
        .problem(.notFound, detail: "No resource at \(request.path).")
    }

    /// Builds the 405 answer, given the methods the path allows; the server adds `Allow` itself.
    /// Defaults to a problem document.
    public var methodNotAllowedResponse: @Sendable (HTTPRequest, [HTTPMethod]) -> HTTPResponse = { request, allowed in
        .problem(
            .methodNotAllowed,
            detail: "\(request.method) is not allowed on \(request.path); use "
                + allowed.map(\.rawValue).joined(separator: ", ") + ".")
    }

    /// Answers `OPTIONS` on a known path that has no `OPTIONS` route of its own, given the
    /// methods the path allows (`OPTIONS` included); the answer is the handler's, as is (set
    /// `Allow` yourself). When nil (the default), `OPTIONS` is a method like any other: 405.
    /// CORS preflights come this way.
    public var optionsResponse: (@Sendable (HTTPRequest, [HTTPMethod]) -> HTTPResponse)?

    /// Consulted for every request that matched a route, before its handler or sink is made:
    /// a response refuses the request with it (e.g. a signature check), nil lets it through.
    /// Its body, if any, is not read. nil (the default) costs nothing.
    public var admission: (@Sendable (HTTPRequest) -> HTTPResponse?)?

    /// An empty router.
    public init() {}

    /// Registers `handler` for `method` on `pattern`. The body, if any, is collected in memory up
    /// to `maxBodyBytes` (default: the configuration's `defaultMaxBodyBytes`); beyond it → 413.
    public mutating func on(
        _ method: HTTPMethod, _ pattern: String, maxBodyBytes: Int? = nil,
        _ handler: @escaping Handler
    ) {
        routes.append(
            Route(
                method: method, pattern: pattern, index: routes.count, segments: Self.compile(pattern),
                maxBodyBytes: maxBodyBytes, action: .collect(handler)))
    }

    /// Registers a GET route (which also answers HEAD).
    public mutating func get(_ pattern: String, _ handler: @escaping Handler) {
        on(.GET, pattern, handler)
    }

    /// Registers a POST route with a collected body.
    public mutating func post(_ pattern: String, maxBodyBytes: Int? = nil, _ handler: @escaping Handler) {
        on(.POST, pattern, maxBodyBytes: maxBodyBytes, handler)
    }

    /// Registers a PUT route with a collected body.
    public mutating func put(_ pattern: String, maxBodyBytes: Int? = nil, _ handler: @escaping Handler) {
        on(.PUT, pattern, maxBodyBytes: maxBodyBytes, handler)
    }

    /// Registers a DELETE route.
    public mutating func delete(_ pattern: String, _ handler: @escaping Handler) {
        on(.DELETE, pattern, handler)
    }

    /// Registers a route whose body is streamed to a sink made per request by `makeSink`, up to
    /// `maxBodyBytes` (checked from `Content-Length` before reading, and while reading).
    public mutating func stream(
        _ method: HTTPMethod, _ pattern: String, maxBodyBytes: Int,
        makeSink: @escaping SinkFactory
    ) {
        routes.append(
            Route(
                method: method, pattern: pattern, index: routes.count, segments: Self.compile(pattern),
                maxBodyBytes: maxBodyBytes, action: .stream(makeSink)))
    }

    static func compile(_ pattern: String) -> [Segment] {
        pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { part in
            part.first == ":" ? .parameter(String(part.dropFirst())) : .literal(String(part))
        }
    }

    /// Finds the route for `method` and a raw (percent-encoded) path (``RouteTable/match(_:target:)``
    /// of these routes; a server matches with the table it made once).
    func match(_ method: HTTPMethod, rawPath: Substring) -> Match {
        RouteTable(self).match(method, target: RawTarget(rawPath: rawPath))
    }
}
