import AnimatedImage
import FoundationEssentials
import Glibc
import SystemResources

/// Frame queries already resolved for an image's content, one table per event loop, so that a
/// cached rendition frame is found without decoding the query, applying the presets and the size
/// rule and building the cache key again — about 14,000 of the 43,000 instructions such a hit took
/// (callgrind, `width=320&format=webp&quality=80`) against 29,000 for a full-size hit.
///
/// Keyed by the content (a canvas size and nothing else the answer depends on) and the query as
/// sent, byte for byte: two spellings of one rendition are two entries, each right. A query whose
/// format is negotiated keeps one answer per outcome of `Accept`. Only valid queries are kept (a
/// 400 is worked out every time) and only short ones. Each table is direct-mapped — ``slots``
/// places, a key's place picked by a digest of its bytes, a newcomer replacing whatever held its
/// place — so it never grows, a lookup is one digest and one comparison (a `Dictionary`'s SipHash
/// and String hashing, which normalises Unicode, cost more than the rest of the lookup), and a
/// client sending endless distinct queries only replaces entries, each a re-resolve away.
final class ResolvedRenditions: Sendable {
    /// What a query resolved to for one image.
    struct Resolved: Sendable {
        let rendition: FrameRendition
        /// The frame cache's key for the image in this rendition, or nil when it is the image's
        /// content id (``ImageFrames/renditionCacheKey(_:_:)``).
        let cacheKey: String?
        /// The format was chosen by `Accept`: the answer carries `Vary: Accept`.
        let negotiated: Bool
    }

    /// Places per event loop (a power of two).
    static let slots = 512
    /// Longer queries are resolved every time (each entry keeps a copy).
    static let maxQueryBytes = 256

    /// One remembered query: immutable, so a lookup hands out a reference. It keeps its key as
    /// bytes of its own (the request's target is not kept alive).
    private final class Entry: Sendable {
        let content: [UInt8]
        let query: [UInt8]
        let digest: UInt64
        /// The answer of a query whose format is fixed.
        let fixed: Resolved?
        /// The answers of a negotiated query, by whether `Accept` takes WebP.
        let webp: Resolved?
        let png: Resolved?

        init(_ key: Key, fixed: Resolved? = nil, webp: Resolved? = nil, png: Resolved? = nil) {
            (content, query, digest) = (Array(key.content), Array(key.query), key.digest)
            (self.fixed, self.webp, self.png) = (fixed, webp, png)
        }

        func holds(_ key: Key) -> Bool {
            digest == key.digest && Self.equal(content, key.content) && Self.equal(query, key.query)
        }

        private static func equal(_ a: [UInt8], _ b: UnsafeBufferPointer<UInt8>) -> Bool {
            a.count == b.count
                && a.withUnsafeBufferPointer { a in a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
        }
    }

    /// A lookup's key — the bytes of the content and the query, valid while the lookup runs — and
    /// its digest: the query's bytes and the first 16 digits of the content (a SHA-256 in hex),
    /// eight bytes at a time, from a per-process random basis, so which queries share a place
    /// cannot be planned from outside.
    private struct Key {
        let content: UnsafeBufferPointer<UInt8>
        let query: UnsafeBufferPointer<UInt8>
        let digest: UInt64

        static let basis = UInt64.random(in: .min ... .max)

        /// Runs `body` with the key of `content` and `query` (the request's bytes, read in place).
        static func with<Result>(_ content: String, _ query: UnsafeRawBufferPointer, _ body: (Key) -> Result) -> Result {
            let query = query.assumingMemoryBound(to: UInt8.self)
            // A native string's bytes in place: `withUTF8` is mutating, and its copy of the
            // record's content id retained a string every loop's requests share.
            if let answer = content.utf8.withContiguousStorageIfAvailable({ body(Key(content: $0, query: query)) }) {
                return answer
            }
            var content = content
            return content.withUTF8 { content in body(Key(content: content, query: query)) }
        }

        private init(content: UnsafeBufferPointer<UInt8>, query: UnsafeBufferPointer<UInt8>) {
            self.content = content
            self.query = query
            let digest = Self.mix(UnsafeRawBufferPointer(query), into: Self.basis)
            self.digest = Self.mix(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: content.prefix(16))), into: digest)
        }

        var slot: Int { Int(truncatingIfNeeded: digest >> 32) & (ResolvedRenditions.slots - 1) }

        private static func mix(_ bytes: UnsafeRawBufferPointer, into digest: UInt64) -> UInt64 {
            var digest = digest
            var offset = 0
            while offset + 8 <= bytes.count {
                digest = step(digest, bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset += 8
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count {
                tail |= UInt64(bytes[offset]) << shift
                shift += 8
                offset += 1
            }
            return step(digest, tail ^ UInt64(bytes.count))
        }

        private static func step(_ digest: UInt64, _ word: UInt64) -> UInt64 {
            let mixed = (digest ^ word) &* 0x9E37_79B9_7F4A_7C15
            return mixed ^ (mixed >> 29)
        }
    }

    private let tables: PerLoop<[Entry?]>

    /// - Parameter loops: the HTTP server's event loops.
    init(loops: Int) {
        tables = PerLoop(count: max(1, loops)) { [Entry?](repeating: nil, count: ResolvedRenditions.slots) }
    }

    /// The resolution of `query` for `content` remembered on `loop`; `acceptsWebP` is asked only
    /// when the format of the query is negotiated.
    func value(content: String, query: Substring, loop: Int, acceptsWebP: () -> Bool) -> Resolved? {
        var query = query
        return query.withUTF8 { value(content: content, query: UnsafeRawBufferPointer($0), loop: loop, acceptsWebP: acceptsWebP) }
    }

    /// ``value(content:query:loop:acceptsWebP:)`` for a query given as its bytes (the request's).
    func value(content: String, query: UnsafeRawBufferPointer, loop: Int, acceptsWebP: () -> Bool) -> Resolved? {
        guard query.count <= Self.maxQueryBytes else { return nil }
        let found = Key.with(content, query) { key -> Entry? in
            guard let entry = tables.withLock(loop, { $0[key.slot] }), entry.holds(key) else { return nil }
            return entry
        }
        guard let found else { return nil }
        if let fixed = found.fixed { return fixed }
        return acceptsWebP() ? found.webp : found.png
    }

    /// Remembers that `query` resolved to `resolved` for `content` on `loop`.
    func remember(_ resolved: Resolved, content: String, query: Substring, loop: Int) {
        var query = query
        query.withUTF8 { remember(resolved, content: content, query: UnsafeRawBufferPointer($0), loop: loop) }
    }

    /// ``remember(_:content:query:loop:)`` for a query given as its bytes (the request's).
    func remember(_ resolved: Resolved, content: String, query: UnsafeRawBufferPointer, loop: Int) {
        guard query.count <= Self.maxQueryBytes else { return }
        Key.with(content, query) { key in
            tables.withLock(loop) { table in
                guard resolved.negotiated else {
                    table[key.slot] = Entry(key, fixed: resolved)
                    return
                }
                let known = table[key.slot].flatMap { $0.holds(key) ? $0 : nil }
                table[key.slot] =
                    resolved.rendition.format == .webp
                    ? Entry(key, webp: resolved, png: known?.png) : Entry(key, webp: known?.webp, png: resolved)
            }
        }
    }
}
