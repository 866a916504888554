/// Values by id, found by a `String` or straight from the UTF-8 bytes of an id (a request
/// path's, with no `String` made for it): each event loop's view of the store's records and its
/// table of the frame cache's hits, both looked up on every request.
///
/// Open addressing with linear probing over a power-of-two array of slots, at most half full;
/// removal shifts the following slots back (no tombstones). Ids are hashed 8 bytes at a time by
/// 128-bit multiply-and-fold steps from a per-table random seed: a handful of instructions per
/// word where `String`'s SipHash takes ~700 for a 64-byte content id, and not predictable from
/// outside (a table only holds ids the process put there, and is only read by one loop).
///
/// Inlinable, so that other modules get it specialized for their values: an unspecialized generic
/// call through value witnesses costs more than the look-up.
public struct IDTable<Value: Sendable>: Sendable {
    @usableFromInline
    struct Slot: Sendable {
        /// The id's UTF-8 bytes (compared as words, with no `String` in the way).
        @usableFromInline var key: [UInt8]
        @usableFromInline var value: Value

        @inlinable init(key: [UInt8], value: Value) { (self.key, self.value) = (key, value) }
    }

    /// Each slot's hash (0: empty; a hash of 0 is stored as 1), probed without touching the
    /// slots' reference-counted contents.
    @usableFromInline var hashes: [UInt64]
    @usableFromInline var slots: [Slot?]
    @usableFromInline var mask: Int
    @usableFromInline let seed: UInt64
    @usableFromInline var held = 0

    /// An empty table with a seed of its own.
    public init() {
        hashes = Array(repeating: 0, count: 16)
        slots = Array(repeating: nil, count: 16)
        mask = 15
        seed = UInt64.random(in: .min ... .max)
    }

    /// The ids held.
    @inlinable public var count: Int { held }

    /// The most heap one id held costs the table itself, besides what its key and value point
    /// to: its slot and hash, four times over — a table is at most half full, and at least a
    /// quarter full just after it doubled.
    public static var bytesPerIDAtMost: Int { 4 * (MemoryLayout<Slot?>.stride + MemoryLayout<UInt64>.stride) }

    /// The value of `id`, or nil; setting nil removes it.
    @inlinable
    public subscript(id: String) -> Value? {
        get { position(of: id).map { slots[$0]!.value } }
        set {
            if let newValue { insert(newValue, for: id) } else { removeValue(for: id) }
        }
    }

    /// The value of the id whose UTF-8 bytes are `bytes`, or nil.
    @inlinable
    public func find(_ bytes: UnsafeRawBufferPointer) -> Value? {
        guard let position = position(of: bytes, hash: digest(bytes)) else { return nil }
        return slots[position]!.value
    }

    /// `body`'s answer about the value of `id` where it is held (not copied out), or nil when
    /// `id` is not held.
    @inlinable
    public func read<Result>(_ id: String, _ body: (Value) -> Result) -> Result? {
        guard let position = position(of: id) else { return nil }
        // Lent where it is held, not copied out (a retain and release of each reference in it).
        return slots.withUnsafeBufferPointer { body($0[position].unsafelyUnwrapped.value) }
    }

    /// Changes the value of `id` in place with `body` (an array in it is not copied); nil when
    /// `id` is not held.
    @inlinable
    @discardableResult
    public mutating func modify<Result>(_ id: String, _ body: (inout Value) -> Result) -> Result? {
        guard let position = position(of: id) else { return nil }
        return body(&slots[position]!.value)
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
            slots[found]!.value = value
            return
        }
        if (held + 1) * 2 > slots.count { grow() }
        place(Slot(key: key, value: value), hash: hash)
        held += 1
    }

    /// Removes `id`'s value; returns it when one was held.
    @inlinable
    @discardableResult
    public mutating func removeValue(for id: String) -> Value? {
        guard var hole = position(of: id) else { return nil }
        let removed = slots[hole]!.value
        (hashes[hole], slots[hole]) = (0, nil)
        held -= 1
        // Backward shift: a later slot of the same run moves into the hole unless its home lies
        // (cyclically) after the hole, so that every id stays reachable from its home.
        var next = (hole + 1) & mask
        while hashes[next] != 0 {
            let home = Int(truncatingIfNeeded: hashes[next]) & mask
            if (next - home) & mask >= (next - hole) & mask {
                (hashes[hole], slots[hole]) = (hashes[next], slots[next])
                (hashes[next], slots[next]) = (0, nil)
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
            if stored == hash, Self.keyEquals(slots, position, bytes) { return position }
            position = (position + 1) & mask
        }
    }

    /// Whether the key of the (held) slot at `position` is `bytes`, compared where the slot
    /// is: reading the slot out of the array copied it, a retain and a release of its key and
    /// value on every look-up.
    @inlinable
    static func keyEquals(_ slots: [Slot?], _ position: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        slots.withUnsafeBufferPointer { slots in slots[position]?.key.withUnsafeBytes { equal($0, bytes) } ?? false }
    }

    @inlinable
    mutating func place(_ slot: Slot, hash: UInt64) {
        var position = Int(truncatingIfNeeded: hash) & mask
        while hashes[position] != 0 { position = (position + 1) & mask }
        (hashes[position], slots[position]) = (hash, slot)
    }

    @inlinable
    mutating func grow() {
        let (oldHashes, oldSlots) = (hashes, slots)
        hashes = Array(repeating: 0, count: oldHashes.count * 2)
        slots = Array(repeating: nil, count: oldSlots.count * 2)
        mask = slots.count - 1
        for (hash, slot) in zip(oldHashes, oldSlots) where hash != 0 { place(slot!, hash: hash) }
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
