import Glibc

/// A router's routes grouped for matching: by their number of segments (an array index), then by
/// their first segment — the routes whose first segment is one literal (`/frames/…`) in one list,
/// the routes that start with a parameter in every list of their length. A path's candidates are
/// then found with one index and a few byte comparisons of its first segment: no hashing, no
/// routes tried that cannot match. Each list keeps registration order.
struct RouteGroups: Sendable {
    /// The routes of one first literal (its UTF-8 bytes), or of a leading parameter (`literal` nil).
    struct Group: Sendable {
        let literal: [UInt8]?
        let routes: [Router.Route]
    }

    /// Index: number of segments. The groups with a first literal, then (if any) the one without.
    private let bySegmentCount: [[Group]]

    /// One more than the most segments a route has: a path with as many matches no route.
    var segmentLimit: Int { bySegmentCount.count }

    init(_ routes: [Router.Route]) {
        let longest = routes.map(\.segments.count).max() ?? 0
        var table: [[Group]] = Array(repeating: [], count: longest + 1)
        for count in 0...longest {
            let sameLength = routes.filter { $0.segments.count == count }
            let leadingParameter = sameLength.filter { $0.firstLiteral == nil }
            var literals: [[UInt8]] = []
            for route in sameLength {
                if let literal = route.firstLiteral, !literals.contains(literal) { literals.append(literal) }
            }
            // A route with a leading parameter may match any first segment: it joins every group,
            // in registration order, so the first route registered still wins.
            table[count] =
                literals.map { literal in
                    Group(literal: literal, routes: sameLength.filter { $0.firstLiteral == literal || $0.firstLiteral == nil })
                } + (leadingParameter.isEmpty ? [] : [Group(literal: nil, routes: leadingParameter)])
        }
        bySegmentCount = table
    }

    /// The routes that may match a path of these segments (offsets into `path`), in registration
    /// order. A first segment with a `%` may still equal a literal once decoded: it gets every
    /// route of its length (a `plain` path has none, ``RawTarget/pathIsPlain``).
    func candidates(_ path: UnsafeRawBufferPointer, _ segments: UnsafeBufferPointer<Range<Int>>, plain: Bool)
        -> [Router.Route]
    {
        guard segments.count < bySegmentCount.count else { return [] }
        let groups = bySegmentCount[segments.count]
        guard !groups.isEmpty else { return [] }
        let first = UnsafeRawBufferPointer(rebasing: path[segments[0]])
        if !plain, ByteSearch.firstOffset(of: 0x25, in: first) != nil { return Self.all(groups) }
        for group in groups {
            guard let literal = group.literal else { return group.routes }
            guard literal.count == first.count else { continue }
            let equal = literal.withUnsafeBytes { literal in
                literal.isEmpty || memcmp(literal.baseAddress!, first.baseAddress!, literal.count) == 0
            }
            if equal { return group.routes }
        }
        return []
    }

    /// Every route of the groups, once each, in registration order.
    private static func all(_ groups: [Group]) -> [Router.Route] {
        var seen = Set<Int>()
        return groups.flatMap(\.routes).filter { seen.insert($0.index).inserted }.sorted { $0.index < $1.index }
    }
}
