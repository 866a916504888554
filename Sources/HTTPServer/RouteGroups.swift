import Glibc

/// A router's routes grouped for matching: by their number of segments, then by their first
/// segment — the routes whose first segment is one literal (`/frames/…`) in one list, the routes
/// that start with a parameter in every list of their length. A path's candidates are then found
/// with one index and a few byte comparisons of its first segment: no hashing, no routes tried
/// that cannot match. Each list keeps registration order.
///
/// Kept in buffers of its own, made once and never changed: the lists hold the routes unretained
/// (``Unmanaged``), so that finding a path's candidates and trying them retains nothing (an array
/// of routes was retained when read out of its group and each route as it was tried). The routes
/// are kept alive by ``routes``, for as long as the groups live: a list handed out by
/// ``candidates(_:_:plain:)`` is valid while its caller holds the groups.
final class RouteGroups: @unchecked Sendable {
    /// One first literal's routes (or a leading parameter's: `literalCount` -1), as offsets into
    /// ``literalBytes`` and ``entries``.
    private struct Group {
        var literalStart: Int
        var literalCount: Int
        var routesStart: Int
        var routesCount: Int
    }

    /// The routes, retained: what keeps the unretained ones in ``entries`` alive.
    private let routes: [Router.Route]
    /// The lists of routes of every group, one after the other; then, for each number of
    /// segments, every route of that length (the candidates of a first segment with a `%`).
    private let entries: UnsafeMutableBufferPointer<Unmanaged<Router.Route>>
    /// The first literals of the groups, one after the other.
    private let literalBytes: UnsafeMutableRawBufferPointer
    /// The groups, by number of segments: those with a first literal, then the one without.
    private let groups: UnsafeMutableBufferPointer<Group>
    /// For each number of segments: its groups (a range of ``groups``) and all its routes (a
    /// range of ``entries``).
    private let bySegmentCount: UnsafeMutableBufferPointer<(groups: Range<Int>, all: Range<Int>)>

    /// One more than the most segments a route has: a path with as many matches no route.
    var segmentLimit: Int { bySegmentCount.count }

    init(_ routes: [Router.Route]) {
        self.routes = routes
        let longest = routes.map(\.segments.count).max() ?? 0
        var entryList: [Unmanaged<Router.Route>] = []
        var literalList: [UInt8] = []
        var groupList: [Group] = []
        var lengths: [(groups: Range<Int>, all: Range<Int>)] = []
        for count in 0...longest {
            let sameLength = routes.filter { $0.segments.count == count }
            let leadingParameter = sameLength.filter { $0.firstLiteral == nil }
            var literals: [[UInt8]] = []
            for route in sameLength {
                if let literal = route.firstLiteral, !literals.contains(literal) { literals.append(literal) }
            }
            let firstGroup = groupList.count
            // A route with a leading parameter may match any first segment: it joins every group,
            // in registration order, so the first route registered still wins.
            for literal in literals {
                let members = sameLength.filter { $0.firstLiteral == literal || $0.firstLiteral == nil }
                groupList.append(
                    Group(
                        literalStart: literalList.count, literalCount: literal.count, routesStart: entryList.count,
                        routesCount: members.count))
                literalList.append(contentsOf: literal)
                entryList.append(contentsOf: members.map { Unmanaged.passUnretained($0) })
            }
            if !leadingParameter.isEmpty {
                groupList.append(
                    Group(
                        literalStart: 0, literalCount: -1, routesStart: entryList.count,
                        routesCount: leadingParameter.count))
                entryList.append(contentsOf: leadingParameter.map { Unmanaged.passUnretained($0) })
            }
            let allStart = entryList.count
            entryList.append(contentsOf: sameLength.map { Unmanaged.passUnretained($0) })
            lengths.append((firstGroup..<groupList.count, allStart..<entryList.count))
        }
        entries = Self.copy(entryList)
        groups = Self.copy(groupList)
        bySegmentCount = Self.copy(lengths)
        literalBytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, literalList.count), alignment: 1)
        literalList.withUnsafeBytes { literalBytes.copyMemory(from: $0) }
    }

    deinit {
        entries.deallocate()
        groups.deallocate()
        bySegmentCount.deallocate()
        literalBytes.deallocate()
    }

    private static func copy<T>(_ elements: [T]) -> UnsafeMutableBufferPointer<T> {
        let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: max(1, elements.count))
        _ = buffer.initialize(from: elements)
        return UnsafeMutableBufferPointer(rebasing: buffer[0..<elements.count])
    }

    /// The routes that may match a path of these segments (offsets into `path`), in registration
    /// order, unretained: valid while the groups live. A first segment with a `%` may still equal
    /// a literal once decoded: it gets every route of its length (a `plain` path has none,
    /// ``RawTarget/pathIsPlain``).
    func candidates(_ path: UnsafeRawBufferPointer, _ segments: UnsafeBufferPointer<Range<Int>>, plain: Bool)
        -> UnsafeBufferPointer<Unmanaged<Router.Route>>
    {
        guard segments.count < bySegmentCount.count else { return UnsafeBufferPointer(start: nil, count: 0) }
        let length = bySegmentCount[segments.count]
        let first = UnsafeRawBufferPointer(rebasing: path[segments[0]])
        if !plain, ByteSearch.firstOffset(of: 0x25, in: first) != nil { return list(length.all) }
        for index in length.groups {
            let group = groups[index]
            guard group.literalCount >= 0 else { return list(group.routesStart..<(group.routesStart + group.routesCount)) }
            guard group.literalCount == first.count else { continue }
            if first.isEmpty || memcmp(literalBytes.baseAddress! + group.literalStart, first.baseAddress!, first.count) == 0 {
                return list(group.routesStart..<(group.routesStart + group.routesCount))
            }
        }
        return UnsafeBufferPointer(start: nil, count: 0)
    }

    private func list(_ range: Range<Int>) -> UnsafeBufferPointer<Unmanaged<Router.Route>> {
        UnsafeBufferPointer(rebasing: UnsafeBufferPointer(entries)[range])
    }
}
