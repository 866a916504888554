import Foundation

/// An id (an image's id or content hash) as a dictionary key, hashed once over its UTF-8 bytes
/// when the key is made, with a mix far cheaper than hashing the bytes with `Hasher`: the cache's
/// hit tables and the store's records are keyed by it, and a frame request looks its id up with
/// a key made from the bytes of its path (``init(borrowing:)``), so a hit makes no String.
///
/// A key kept in a table holds its id; a key made from bytes points at them and must live only
/// while it is looked up, within the caller's access to those bytes.
public struct IDKey: Hashable, @unchecked Sendable {
    /// The id of a key kept in a table; nil for a borrowed key.
    private let id: String?
    /// The id's bytes of a borrowed key (empty for a kept one).
    private let borrowed: UnsafeRawBufferPointer
    /// ``mixed(_:)`` of the id's bytes.
    private let digest: UInt64

    /// The key of `id`, to keep in a table or look up with.
    public init(_ id: String) {
        self.id = id
        borrowed = UnsafeRawBufferPointer(start: nil, count: 0)
        var bytes = id
        digest = bytes.withUTF8 { Self.mixed(UnsafeRawBufferPointer($0)) }
    }

    /// A key for looking up the id whose UTF-8 bytes are `bytes`; it must not outlive them.
    public init(borrowing bytes: UnsafeRawBufferPointer) {
        id = nil
        borrowed = bytes
        digest = Self.mixed(bytes)
    }

    private func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard var id else { return body(borrowed) }
        return id.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    public static func == (lhs: IDKey, rhs: IDKey) -> Bool {
        guard lhs.digest == rhs.digest else { return false }
        return lhs.withBytes { left -> Bool in
            rhs.withBytes { right -> Bool in
                guard left.count == right.count else { return false }
                guard let a = left.baseAddress, let b = right.baseAddress else { return left.count == 0 }
                return memcmp(a, b, left.count) == 0
            }
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(digest)
    }

    /// Drawn once per process, so that ids made to collide in one process do not in another.
    private static let seed = UInt64.random(in: .min ... .max)

    /// The bytes mixed eight at a time (each step a bijection of the 64-bit state), from ``seed``
    /// and the length.
    static func mixed(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var state = seed ^ UInt64(bytes.count)
        var offset = 0
        while offset + 8 <= bytes.count {
            state = mix(state ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            tail |= UInt64(bytes[offset]) << shift
            shift += 8
            offset += 1
        }
        return mix(state ^ tail)
    }

    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        var x = value &* 0x9E37_79B9_7F4A_7C15
        x ^= x >> 29
        x = x &* 0xBF58_476D_1CE4_E5B9
        return x ^ (x >> 32)
    }
}
