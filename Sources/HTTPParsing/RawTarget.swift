/// A request target kept as bytes of its request head: the head's buffer (the same array its
/// ``HTTPHeaders`` index into, one more reference to it) and the offsets of the target, its raw
/// path and its raw query in it — so a request carries its target, path and query without
/// making a `String` of any of them (a `String` and three `Substring`s of it cost an allocation,
/// its free and a retain and release of each wherever the request was copied).
@usableFromInline
package struct RawTarget: Sendable {
    /// The bytes the offsets point into: a request head's, or a copy of a target given as text.
    @usableFromInline
    package let storage: [UInt8]
    package let targetStart: Int32
    package let targetEnd: Int32
    /// The raw (percent-encoded) path: never empty for a parsed target (an absolute-form target
    /// without a path gets a `/` of its own after the target's bytes).
    @usableFromInline
    package let pathStart: Int32
    /// The path's end, its sign bit set when the path has no `%` (``pathIsPlain``): kept in the
    /// offset so that the target stays 32 bytes without spare values — with a field more (a
    /// `Bool`, an `Int32`), copies of requests and of the parser's optional head cost more.
    @usableFromInline
    package let pathEndAndPlain: Int32
    /// The raw query (after `?`, without a `#fragment`); `queryStart` is -1 without a `?`.
    @usableFromInline
    package let queryStart: Int32
    @usableFromInline
    package let queryEnd: Int32

    /// The end of the raw path in ``storage``.
    @inlinable
    package var pathEnd: Int32 { pathEndAndPlain & Int32.max }

    /// Whether the raw path has no `%` (nothing to decode in it, nor in any segment of it): known
    /// from the parser's check of the target, so that the router, the path parameters and the
    /// access log need not each search the path for one.
    @inlinable
    package var pathIsPlain: Bool { pathEndAndPlain < 0 }

    /// The target at `target` of `storage` (a target ``RequestTarget/isValid(_:method:)``
    /// accepted), split into its path and query.
    package init(storage: [UInt8], target: Range<Int>) {
        let firstEscape = storage.withUnsafeBytes {
            ByteSearch.firstOffset(of: 0x25, in: $0, range: target) ?? target.upperBound
        }
        self.init(storage: storage, target: target, firstEscape: firstEscape)
    }

    /// ``init(storage:target:)`` given the offset in `storage` of the target's first `%` (its end
    /// when it has none), as the parser found it.
    package init(storage: [UInt8], target: Range<Int>, firstEscape: Int) {
        let parts = storage.withUnsafeBytes {
            RequestTarget.parts(of: UnsafeRawBufferPointer(rebasing: $0[target]))
        }
        let base = target.lowerBound
        if parts.path.isEmpty {
            // Only an absolute-form target without a path (`http://host`, `http://host?q`).
            var copy = storage
            copy.append(0x2F)
            self.storage = copy
            (pathStart, pathEndAndPlain) = (Int32(copy.count - 1), Int32(copy.count) | Int32.min)
        } else {
            self.storage = storage
            // Plain when the target's first `%` is not before the path's end.
            let plain = firstEscape >= base + parts.path.upperBound
            pathStart = Int32(base + parts.path.lowerBound)
            pathEndAndPlain = Int32(base + parts.path.upperBound) | (plain ? Int32.min : 0)
        }
        (targetStart, targetEnd) = (Int32(target.lowerBound), Int32(target.upperBound))
        if let query = parts.query {
            (queryStart, queryEnd) = (Int32(base + query.lowerBound), Int32(base + query.upperBound))
        } else {
            (queryStart, queryEnd) = (-1, -1)
        }
    }

    /// A target given as text (requests made by hand, tests).
    package init(_ target: String) {
        let bytes = Array(target.utf8)
        self.init(storage: bytes, target: 0..<bytes.count)
    }

    /// A raw path alone, as it is (no query, nothing split off): for tests of routing and records.
    package init(rawPath: Substring) {
        storage = Array(rawPath.utf8)
        (targetStart, targetEnd) = (0, Int32(storage.count))
        let plain = storage.withUnsafeBytes { ByteSearch.firstOffset(of: 0x25, in: $0) == nil }
        (pathStart, pathEndAndPlain) = (0, Int32(storage.count) | (plain ? Int32.min : 0))
        (queryStart, queryEnd) = (-1, -1)
    }

    /// The target exactly as sent (a `String` made each time it is read).
    package var target: String { string(Int(targetStart)..<Int(targetEnd)) }

    /// The raw path as text (made each time it is read).
    package var rawPath: Substring { Substring(string(pathRange)) }

    /// The raw query as text (made each time it is read), nil without a `?`.
    package var rawQuery: Substring? { queryStart < 0 ? nil : Substring(string(Int(queryStart)..<Int(queryEnd))) }

    /// Whether the target has a query with at least one byte.
    package var hasQuery: Bool { queryEnd > queryStart }

    /// The offsets of the raw path in ``storage``.
    @usableFromInline
    package var pathRange: Range<Int> { Int(pathStart)..<Int(pathEnd) }

    /// The number of bytes of the raw path.
    package var pathByteCount: Int { Int(pathEnd - pathStart) }

    /// Calls `body` with the raw path's bytes.
    @inlinable
    package func withPath<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        let range = pathRange
        return storage.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Calls `body` with the raw query's bytes (none without a `?`).
    @inlinable
    package func withQuery<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        let range = queryStart < 0 ? 0..<0 : Int(queryStart)..<Int(queryEnd)
        return storage.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    private func string(_ range: Range<Int>) -> String {
        storage.withUnsafeBytes { String(decoding: UnsafeRawBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }
}
