/// Values by id, found by a `String` or straight from the UTF-8 bytes of an id (a request
/// path's, with no `String` made for it): each event loop's view of the store's records and its
/// table of the frame cache's hits, both looked up on every request.
///
/// Open addressing with linear probing over a power-of-two array of slots, at most half full;
/// removal shifts the following slots back (no tombstones). A slot is one position of three
/// parallel arrays: hashes, keys and values. Ids are hashed 8 bytes at a time by
/// 128-bit multiply-and-fold steps from a per-table random seed: a handful of instructions per
/// word where `String`'s SipHash takes ~700 for a 64-byte content id, and not predictable from
/// outside (a table only holds ids the process put there, and is only read by one loop).
///
/// Inlinable, so that other modules get it specialized for their values: an unspecialized generic
/// call through value witnesses costs more than the look-up.
public struct IDTable<Value: Sendable>: Sendable {
    /// Each slot's hash (0: empty; a hash of 0 is stored as 1), probed without touching the
    /// slots' reference-counted contents.
    @usableFromInline var hashes: [UInt64]
    /// Each slot's id as UTF-8 bytes (compared as words, with no `String` in the way); empty in
    /// an empty slot. Apart from the values, not in an optional pair with each, so that a
    /// look-up compares a key where it is held: read out of an optional slot, it was retained
    /// and released, a write to a reference count that every loop's table of the same id shares
    /// (the tables are given one array of the id's bytes), on every hit.
    @usableFromInline var keys: [[UInt8]]
    /// Each slot's value (nil in an empty slot).
    @usableFromInline var values: [Value?]
    @usableFromInline var mask: Int
    @usableFromInline let seed: UInt64
    @usableFromInline var held = 0

    /// An empty table with a seed of its own.
    public init() {
        hashes = Array(repeating: 0, count: 16)
        keys = Array(repeating: [], count: 16)
        values = Array(repeating: nil, count: 16)
        mask = 15
        seed = UInt64.random(in: .min ... .max)
    }

    /// The ids held.
    @inlinable public var count: Int { held }

    /// The most heap one id held costs the table itself, besides what its key and value point
    /// to: its slot and hash, four times over — a table is at most half full, and at least a
    /// quarter full just after it doubled.
    public static var bytesPerIDAtMost: Int {
        4 * (MemoryLayout<[UInt8]>.stride + MemoryLayout<Value?>.stride + MemoryLayout<UInt64>.stride)
    }

    /// The value of `id`, or nil; setting nil removes it.
    @inlinable
    public subscript(id: String) -> Value? {
        get { position(of: id).map { values[$0]! } }
        set {
            if let newValue { insert(newValue, for: id) } else { removeValue(for: id) }
        }
    }

    /// The value of the id whose UTF-8 bytes are `bytes`, or nil.
    @inlinable
    public func find(_ bytes: UnsafeRawBufferPointer) -> Value? {
        guard let position = position(of: bytes, hash: digest(bytes)) else { return nil }
        return values[position]!
    }

    /// `body`'s answer about the value of `id` where it is held (not copied out), or nil when
    /// `id` is not held.
    @inlinable
    public func read<Result>(_ id: String, _ body: (Value) -> Result) -> Result? {
        guard let position = position(of: id) else { return nil }
        // Lent where it is held, not copied out (a retain and release of each reference in it).
        return values.withUnsafeBufferPointer { body($0[position].unsafelyUnwrapped) }
    }

    /// Changes the value of `id` in place with `body` (an array in it is not copied); nil when
    /// `id` is not held.
    @inlinable
    @discardableResult
    public mutating func modify<Result>(_ id: String, _ body: (inout Value) -> Result) -> Result? {
        guard let position = position(of: id) else { return nil }
        return body(&values[position]!)
    }

    /// ``modify(_:_:)`` of the id whose UTF-8 bytes are `bytes` (a request path's: no `String`
    /// made for it).
    @inlinable
    @discardableResult
    public mutating func modify<Result>(utf8 bytes: UnsafeRawBufferPointer, _ body: (inout Value) -> Result) -> Result? {
        guard let position = position(of: bytes, hash: digest(bytes)) else { return nil }
        return body(&values[position]!)
    }

    /// Holds `value` for `id`, replacing the one held.
    @inlinable
    public mutating func insert(_ value: Value, for id: String) {
        insert(value, forUTF8: Array(id.utf8))
    }

    /// Holds `value` for the id whose UTF-8 bytes are `key`, replacing the one held. The table
    /// keeps `key` itself: tables given one array share its buffer, where each would otherwise
    /// hold a copy (112 bytes of heap for a 64-byte content id).
    @inlinable
    public mutating func insert(_ value: Value, forUTF8 key: [UInt8]) {
        let (hash, found) = key.withUnsafeBytes { bytes -> (UInt64, Int?) in
            let hash = digest(bytes)
            return (hash, position(of: bytes, hash: hash))
        }
        if let found {
            values[found] = value
            return
        }
        if (held + 1) * 2 > values.count { grow() }
        place(key, value, hash: hash)
        held += 1
    }

    /// Removes `id`'s value; returns it when one was held.
    @inlinable
    @discardableResult
    public mutating func removeValue(for id: String) -> Value? {
        guard var hole = position(of: id) else { return nil }
        let removed = values[hole]!
        clear(hole)
        held -= 1
        // Backward shift: a later slot of the same run moves into the hole unless its home lies
        // (cyclically) after the hole, so that every id stays reachable from its home.
        var next = (hole + 1) & mask
        while hashes[next] != 0 {
            let home = Int(truncatingIfNeeded: hashes[next]) & mask
            if (next - home) & mask >= (next - hole) & mask {
                (hashes[hole], keys[hole], values[hole]) = (hashes[next], keys[next], values[next])
                clear(next)
                hole = next
            }
            next = (next + 1) & mask
        }
        return removed
    }

    /// The slot holding `id`, or nil.
    @inlinable
    func position(of id: String) -> Int? {
        // A native string's bytes in place (`withUTF8` is mutating: it copied the string, a
        // retain and a release); a copy made contiguous otherwise.
        if let found = id.utf8.withContiguousStorageIfAvailable({ utf8 -> Int? in
            let bytes = UnsafeRawBufferPointer(utf8)
            return position(of: bytes, hash: digest(bytes))
        }) {
            return found
        }
        var id = id
        return id.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            return position(of: bytes, hash: digest(bytes))
        }
    }

    /// `bytes` hashed with this table's seed, never 0 (the mark of an empty slot).
    @inlinable
    func digest(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let hash = Self.hash(bytes, seed: seed)
        return hash == 0 ? 1 : hash
    }

    @inlinable
    func position(of bytes: UnsafeRawBufferPointer, hash: UInt64) -> Int? {
        var position = Int(truncatingIfNeeded: hash) & mask
        while true {
            let stored = hashes[position]
            if stored == 0 { return nil }
            if stored == hash, Self.keyEquals(keys, position, bytes) { return position }
            position = (position + 1) & mask
        }
    }

    /// Whether the key of the slot at `position` is `bytes`, compared where the key is held
    /// (no retain and release of it: see ``keys``).
    @inlinable
    static func keyEquals(_ keys: [[UInt8]], _ position: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        keys.withUnsafeBufferPointer { keys in keys[position].withUnsafeBytes { equal($0, bytes) } }
    }

    @inlinable
    mutating func place(_ key: [UInt8], _ value: Value, hash: UInt64) {
        var position = Int(truncatingIfNeeded: hash) & mask
        while hashes[position] != 0 { position = (position + 1) & mask }
        (hashes[position], keys[position], values[position]) = (hash, key, value)
    }

    /// Empties the slot at `position`.
    @inlinable
    mutating func clear(_ position: Int) {
        (hashes[position], keys[position], values[position]) = (0, [], nil)
    }

    @inlinable
    mutating func grow() {
        let (oldHashes, oldKeys, oldValues) = (hashes, keys, values)
        hashes = Array(repeating: 0, count: oldHashes.count * 2)
        keys = Array(repeating: [], count: oldKeys.count * 2)
        values = Array(repeating: nil, count: oldValues.count * 2)
        mask = values.count - 1
        for position in oldHashes.indices where oldHashes[position] != 0 {
            place(oldKeys[position], oldValues[position]!, hash: oldHashes[position])
        }
    }

    @inlinable
    static func equal(_ stored: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard stored.count == bytes.count else { return false }
        var offset = 0
        while offset + 8 <= stored.count {
            let word = stored.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            guard word == bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) else { return false }
            offset += 8
        }
        while offset < stored.count {
            guard stored[offset] == bytes[offset] else { return false }
            offset += 1
        }
        return true
    }

    /// `bytes` hashed from `seed`: each 8-byte word (the last one zero-padded, the length mixed
    /// in) folded in by a 64×64→128-bit multiply, high half xor low half. The words go to two
    /// lanes in turn (even words one, odd words the other), so that the two multiplies of each
    /// 16 bytes do not wait on each other and the loop runs half as often: a 64-byte content
    /// id, looked up twice on every hit, is hashed in ~104 instructions where one lane took ~153.
    @inlinable
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        let count = bytes.count
        var even = fold(seed ^ UInt64(count), 0x9E37_79B9_7F4A_7C15)
        var odd = fold(even ^ 0x5851_F42D_4C95_7F2D, 0x9E37_79B9_7F4A_7C15)
        if let base = bytes.baseAddress {
            var offset = 0
            let pairsEnd = count & ~15
            while offset < pairsEnd {
                even = fold(even ^ base.loadUnaligned(fromByteOffset: offset, as: UInt64.self), 0xE703_7ED1_A0B4_28DB)
                odd = fold(odd ^ base.loadUnaligned(fromByteOffset: offset &+ 8, as: UInt64.self), 0xA076_1D64_78BD_642F)
                offset &+= 16
            }
            if offset &+ 8 <= count {
                even = fold(even ^ base.loadUnaligned(fromByteOffset: offset, as: UInt64.self), 0xE703_7ED1_A0B4_28DB)
                offset &+= 8
            }
            if offset < count {
                var tail: UInt64 = 0
                for index in offset..<count {
                    tail |= UInt64(base.load(fromByteOffset: index, as: UInt8.self)) << (8 &* UInt64(index &- offset))
                }
                odd = fold(odd ^ tail, 0xA076_1D64_78BD_642F)
            }
        }
        return fold(even ^ fold(odd, 0x8EBC_6AF0_9C88_C6E3), 0x8EBC_6AF0_9C88_C6E3)
    }

    @inlinable
    static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (high, low) = a.multipliedFullWidth(by: b)
        return high ^ low
    }
}
