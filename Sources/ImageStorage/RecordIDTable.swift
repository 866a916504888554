/// An event loop's records by id (``RecordCache``'s view): found by a `String` or straight from the
/// UTF-8 bytes of an id — a request path's, with no `String` made for it.
///
/// Open addressing with linear probing over a power-of-two array of slots, at most half full;
/// removal shifts the following slots back (no tombstones). Ids are hashed 8 bytes at a time by
/// 128-bit multiply-and-fold steps from a per-table random seed: a handful of instructions per
/// word where `String`'s SipHash takes ~700 for a 64-byte content id, and not predictable from
/// outside (a table only holds ids of records the store has, and is only read by its own loop).
struct RecordIDTable<Value: Sendable>: Sendable {
    private struct Slot: Sendable {
        var id: String
        var value: Value
    }

    /// Each slot's hash (0: empty; a hash of 0 is stored as 1), probed without touching the
    /// slots' reference-counted contents.
    private var hashes: [UInt64]
    private var slots: [Slot?]
    private var mask: Int
    private let seed: UInt64
    /// The ids held.
    private(set) var count = 0

    init() {
        hashes = Array(repeating: 0, count: 16)
        slots = Array(repeating: nil, count: 16)
        mask = 15
        seed = UInt64.random(in: .min ... .max)
    }

    /// The value of `id`, or nil; setting nil removes it.
    subscript(id: String) -> Value? {
        get {
            var id = id
            return id.withUTF8 { find(UnsafeRawBufferPointer($0)) }
        }
        set {
            if let newValue { insert(newValue, for: id) } else { removeValue(for: id) }
        }
    }

    /// The value of the id whose UTF-8 bytes are `bytes`, or nil.
    func find(_ bytes: UnsafeRawBufferPointer) -> Value? {
        guard let position = position(of: bytes, hash: digest(bytes)) else { return nil }
        return slots[position]!.value
    }

    /// Holds `value` for `id`, replacing the one held.
    mutating func insert(_ value: Value, for id: String) {
        var key = id
        let (hash, found) = key.withUTF8 { utf8 -> (UInt64, Int?) in
            let bytes = UnsafeRawBufferPointer(utf8)
            let hash = digest(bytes)
            return (hash, position(of: bytes, hash: hash))
        }
        if let found {
            slots[found]!.value = value
            return
        }
        if (count + 1) * 2 > slots.count { grow() }
        place(Slot(id: key, value: value), hash: hash)
        count += 1
    }

    /// Removes `id`'s value; returns it when one was held.
    @discardableResult
    mutating func removeValue(for id: String) -> Value? {
        var key = id
        let found = key.withUTF8 { utf8 -> Int? in
            let bytes = UnsafeRawBufferPointer(utf8)
            return position(of: bytes, hash: digest(bytes))
        }
        guard var hole = found else { return nil }
        let removed = slots[hole]!.value
        (hashes[hole], slots[hole]) = (0, nil)
        count -= 1
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

    /// `bytes` hashed with this table's seed, never 0 (the mark of an empty slot).
    private func digest(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let hash = Self.hash(bytes, seed: seed)
        return hash == 0 ? 1 : hash
    }

    private func position(of bytes: UnsafeRawBufferPointer, hash: UInt64) -> Int? {
        var position = Int(truncatingIfNeeded: hash) & mask
        while true {
            let held = hashes[position]
            if held == 0 { return nil }
            if held == hash, Self.equal(slots[position]!.id, bytes) { return position }
            position = (position + 1) & mask
        }
    }

    private mutating func place(_ slot: Slot, hash: UInt64) {
        var position = Int(truncatingIfNeeded: hash) & mask
        while hashes[position] != 0 { position = (position + 1) & mask }
        (hashes[position], slots[position]) = (hash, slot)
    }

    private mutating func grow() {
        let (oldHashes, oldSlots) = (hashes, slots)
        hashes = Array(repeating: 0, count: oldHashes.count * 2)
        slots = Array(repeating: nil, count: oldSlots.count * 2)
        mask = slots.count - 1
        for (hash, slot) in zip(oldHashes, oldSlots) where hash != 0 { place(slot!, hash: hash) }
    }

    private static func equal(_ id: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let utf8 = id.utf8
        guard utf8.count == bytes.count else { return false }
        return utf8.withContiguousStorageIfAvailable { stored in
            let stored = UnsafeRawBufferPointer(stored)
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
        } ?? utf8.elementsEqual(bytes)
    }

    /// `bytes` hashed from `seed`: each 8-byte word (the last one zero-padded, the length mixed
    /// in) folded in by a 64×64→128-bit multiply, high half xor low half.
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        var hash = fold(seed ^ UInt64(bytes.count), 0x9E37_79B9_7F4A_7C15)
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = fold(hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self), 0xE703_7ED1_A0B4_28DB)
            offset += 8
        }
        if offset < bytes.count {
            var tail: UInt64 = 0
            for index in offset..<bytes.count { tail |= UInt64(bytes[index]) << (8 * UInt64(index - offset)) }
            hash = fold(hash ^ tail, 0xE703_7ED1_A0B4_28DB)
        }
        return fold(hash, 0x8EBC_6AF0_9C88_C6E3)
    }

    private static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (high, low) = a.multipliedFullWidth(by: b)
        return high ^ low
    }
}
