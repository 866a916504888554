import Glibc

/// A router's routes as a server matches them, made once when the server is made and reached by
/// the event loops through one reference: a `Router` is a value (its routes, their groups and
/// its handlers), and matching on the server's copy of it copied all of that — a retain and a
/// release of each part — for every request.
final class RouteTable: Sendable {
    /// The routes grouped by their number of segments and first literal: only one group can
    /// match a path, so matching never tries the others (and hashes nothing to find it).
    private let groups: RouteGroups
    /// The router's answer to `OPTIONS` on a known path (``Router/optionsResponse``).
    private let optionsResponse: (@Sendable (HTTPRequest, [HTTPMethod]) -> HTTPResponse)?

    init(_ router: Router) {
        groups = RouteGroups(router.routes)
        optionsResponse = router.optionsResponse
    }

    /// Finds the route for `method` and the raw (percent-encoded) path of `target`. The path is
    /// split into segments by byte offsets (on the stack) and literals are compared as bytes, and
    /// parameters are bound as ranges of the target's bytes, so matching allocates nothing.
    func match(_ method: HTTPMethod, target: RawTarget) -> Router.Match {
        target.withPath { raw in
            // Segments follow the leading "/". A path of more segments than any route has
            // matches none: it is split no further (and its slashes are not counted first).
            let capacity = groups.segmentLimit
            return withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: capacity) { ranges in
                var start = min(1, raw.count)
                var n = 0
                while let slash = ByteSearch.firstOffset(of: 0x2F, in: raw, range: start..<raw.count) {
                    ranges[n] = start..<slash
                    n += 1
                    start = slash + 1
                    if n == capacity { return .notFound }
                }
                ranges[n] = start..<raw.count
                return match(method, target, raw, UnsafeBufferPointer(rebasing: ranges[0...n]))
            }
        }
    }

    private func match(
        _ method: HTTPMethod, _ target: RawTarget, _ path: UnsafeRawBufferPointer,
        _ segments: UnsafeBufferPointer<Range<Int>>
    ) -> Router.Match {
        // Unretained: the groups keep the routes, and this table keeps the groups (``RouteGroups``).
        let candidates = groups.candidates(path, segments, plain: target.pathIsPlain)
        guard !candidates.isEmpty else { return .notFound }
        // A route for the method — or for HEAD, the first GET route unless a HEAD route matches —
        // found without building anything else: only the route found is retained, and only its
        // parameters are bound (a GET route HEAD falls back to is noted by its position).
        let headFallsBack = method == .HEAD
        var fallback = -1
        for index in 0..<candidates.count {
            let route = candidates[index]
            if route._withUnsafeGuaranteedRef({ $0.method == method }) {
                if let parameters = route._withUnsafeGuaranteedRef({ Self.bind($0, target, path, segments) }) {
                    return .found(route.takeUnretainedValue(), parameters)
                }
            } else if headFallsBack && fallback < 0 && route._withUnsafeGuaranteedRef({ $0.method == .GET }) {
                guard let parameters = route._withUnsafeGuaranteedRef({ Self.bind($0, target, path, segments) })
                else { continue }
                // Answered by this GET route unless a HEAD route comes later (then bound again).
                if !Self.hasHEADRoute(candidates, after: index) { return .found(route.takeUnretainedValue(), parameters) }
                fallback = index
            }
        }
        if fallback >= 0,
            let parameters = candidates[fallback]._withUnsafeGuaranteedRef({ Self.bind($0, target, path, segments) })
        {
            return .found(candidates[fallback].takeUnretainedValue(), parameters)
        }
        return unmatched(method, target, path, segments, candidates.map { $0.takeUnretainedValue() })
    }

    /// Whether a route of `candidates` after `index` is a HEAD route.
    private static func hasHEADRoute(_ candidates: UnsafeBufferPointer<Unmanaged<Router.Route>>, after index: Int) -> Bool {
        for later in (index + 1)..<candidates.count where candidates[later]._withUnsafeGuaranteedRef({ $0.method == .HEAD }) {
            return true
        }
        return false
    }

    /// No route for the method: the methods the path allows (405), the router's `OPTIONS`
    /// answer, or 404.
    private func unmatched(
        _ method: HTTPMethod, _ target: RawTarget, _ path: UnsafeRawBufferPointer,
        _ segments: UnsafeBufferPointer<Range<Int>>, _ candidates: [Router.Route]
    ) -> Router.Match {
        var allowed: [HTTPMethod] = []
        var firstBound: Router.Route?
        for route in candidates where Self.matches(route, target, path, segments) {
            if firstBound == nil { firstBound = route }
            if !allowed.contains(route.method) { allowed.append(route.method) }
            if route.method == .GET && !allowed.contains(.HEAD) { allowed.append(.HEAD) }
        }
        guard !allowed.isEmpty else { return .notFound }
        guard let optionsResponse else { return .methodNotAllowed(allowed) }
        allowed.append(.OPTIONS)
        guard method == .OPTIONS else { return .methodNotAllowed(allowed) }
        let methods = allowed
        // Reported under the path's (first) route, as the OPTIONS answer for that resource.
        let answer = Router.Route(
            method: .OPTIONS, pattern: firstBound?.pattern ?? "", index: firstBound?.index ?? -1,
            segments: [], maxBodyBytes: nil,
            action: .collect { request, _ in .now(optionsResponse(request, methods)) })
        return .found(answer, HTTPPathParameters())
    }

    /// Whether `route` matches the path (``matches(_:_:_:_:_:plain:)`` with the route's literals).
    private static func matches(
        _ route: Router.Route, _ target: RawTarget, _ path: UnsafeRawBufferPointer,
        _ segments: UnsafeBufferPointer<Range<Int>>
    ) -> Bool {
        matches(
            route, UnsafeBufferPointer(route.literalRanges), UnsafeRawBufferPointer(route.literalBytes), path, segments,
            plain: target.pathIsPlain)
    }

    /// The parameters of `pattern` bound to the path's segments, or nil when it does not match:
    /// literals compared as bytes (decoded only when the segment has a `%`), the parameters kept as
    /// ranges of the target's bytes (decoded when asked for).
    private static func bind(
        _ route: Router.Route, _ target: RawTarget, _ path: UnsafeRawBufferPointer,
        _ segments: UnsafeBufferPointer<Range<Int>>
    ) -> HTTPPathParameters? {
        guard matches(route, target, path, segments) else { return nil }
        let names = route.parameterNames
        guard !names.isEmpty else { return HTTPPathParameters() }
        // The values stay ranges of the target's bytes; they are decoded when a handler asks.
        let offset = Int(target.pathStart)
        let literalRanges = route.literalRanges
        return withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: names.count) { ranges in
            var bound = 0
            for position in 0..<literalRanges.count where literalRanges[position] == nil {
                let segment = segments[position]
                ranges[bound] = (segment.lowerBound + offset)..<(segment.upperBound + offset)
                bound += 1
            }
            return HTTPPathParameters(
                names: names, bytes: target.storage, ranges: UnsafeBufferPointer(ranges), plain: target.pathIsPlain)
        }
    }

    /// Whether every literal of `route` equals its segment of `path` (decoded when it has a `%`;
    /// none has when the path is `plain`) and no parameter's segment is empty.
    private static func matches(
        _ route: Router.Route, _ literalRanges: UnsafeBufferPointer<Range<Int>?>, _ literalBytes: UnsafeRawBufferPointer,
        _ path: UnsafeRawBufferPointer, _ segments: UnsafeBufferPointer<Range<Int>>, plain: Bool
    ) -> Bool {
        guard literalRanges.count == segments.count else { return false }
        for position in 0..<segments.count {
            let segment = UnsafeRawBufferPointer(rebasing: path[segments[position]])
            guard let literalRange = literalRanges[position] else {
                if segment.isEmpty { return false }
                continue
            }
            if !plain, ByteSearch.firstOffset(of: 0x25, in: segment) != nil {
                guard case .literal(let literal) = route.segments[position],
                    RequestTarget.percentDecode(segment) == literal
                else { return false }
                continue
            }
            guard segment.count == literalRange.count,
                segment.count == 0
                    || memcmp(segment.baseAddress!, literalBytes.baseAddress! + literalRange.lowerBound, segment.count) == 0
            else { return false }
        }
        return true
    }
}
