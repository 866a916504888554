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
        let candidates = groups.candidates(path, segments, plain: target.pathIsPlain)
        guard !candidates.isEmpty else { return .notFound }
        // A route for the method — or for HEAD, the first GET route unless a HEAD route matches —
        // found without building anything else.
        // The fallback is kept as a route and its parameters, not an optional tuple of both: that
        // optional was destroyed on every return through the runtime's generic value witnesses.
        let headFallsBack = method == .HEAD
        var fallback: Router.Route?
        var fallbackParameters = HTTPPathParameters()
        for route in candidates where route.method == method || (headFallsBack && route.method == .GET) {
            guard let parameters = Self.bind(route, target, path, segments) else { continue }
            if route.method == method { return .found(route, parameters) }
            if fallback == nil { (fallback, fallbackParameters) = (route, parameters) }
        }
        if let fallback { return .found(fallback, fallbackParameters) }
        // None: the methods the path allows (405), or 404.
        var allowed: [HTTPMethod] = []
        var firstBound: Router.Route?
        for route in candidates where Self.bind(route, target, path, segments) != nil {
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

    /// The parameters of `pattern` bound to the path's segments, or nil when it does not match:
    /// literals compared as bytes (decoded only when the segment has a `%`), the parameters kept as
    /// ranges of the target's bytes (decoded when asked for).
    private static func bind(
        _ route: Router.Route, _ target: RawTarget, _ path: UnsafeRawBufferPointer,
        _ segments: UnsafeBufferPointer<Range<Int>>
    ) -> HTTPPathParameters? {
        let matched = route.literalRanges.withUnsafeBufferPointer { literalRanges in
            route.literalBytes.withUnsafeBytes { literalBytes in
                matches(route, literalRanges, literalBytes, path, segments, plain: target.pathIsPlain)
            }
        }
        guard matched else { return nil }
        let names = route.parameterNames
        guard !names.isEmpty else { return HTTPPathParameters() }
        // The values stay ranges of the target's bytes; they are decoded when a handler asks.
        let offset = Int(target.pathStart)
        return withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: names.count) { ranges in
            var bound = 0
            route.literalRanges.withUnsafeBufferPointer { literalRanges in
                for (position, literal) in literalRanges.enumerated() where literal == nil {
                    let segment = segments[position]
                    ranges[bound] = (segment.lowerBound + offset)..<(segment.upperBound + offset)
                    bound += 1
                }
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
