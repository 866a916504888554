/// A map with at most `capacity` entries that forgets the least recently used one to make room.
/// Lookups, insertions and removals are O(1): entries sit in a doubly linked list threaded
/// through an array of slots, most recent first. Not thread-safe; its owner locks.
struct LRUCache<Key: Hashable, Value> {
    private struct Slot {
        var key: Key
        /// nil while the slot is free, so a forgotten value is released at once.
        var value: Value?
        var newer: Int
        var older: Int
    }

    let capacity: Int
    private var slots: [Slot] = []
    private var positions: [Key: Int] = [:]
    private var freeSlots: [Int] = []
    /// The most and least recently used slots (-1 when empty).
    private var newest = -1
    private var oldest = -1

    init(capacity: Int) {
        precondition(capacity > 0, "an LRU cache holds at least one entry")
        self.capacity = capacity
    }

    var count: Int { positions.count }

    /// The value of `key`, which becomes the most recently used.
    mutating func value(for key: Key) -> Value? {
        guard let slot = positions[key] else { return nil }
        moveToFront(slot)
        return slots[slot].value
    }

    /// The value of `key`, without touching its recency.
    func peek(_ key: Key) -> Value? {
        positions[key].flatMap { slots[$0].value }
    }

    /// Stores `value` as the most recently used; returns the entry dropped to make room, if any.
    @discardableResult
    mutating func insert(_ value: Value, for key: Key) -> (key: Key, value: Value)? {
        if let slot = positions[key] {
            slots[slot].value = value
            moveToFront(slot)
            return nil
        }
        var evicted: (key: Key, value: Value)? = nil
        if positions.count >= capacity, oldest >= 0 {
            let victim = slots[oldest]
            evicted = (victim.key, victim.value!)
            _ = removeValue(for: victim.key)
        }
        let slot: Int
        let fresh = Slot(key: key, value: value, newer: -1, older: newest)
        if let reused = freeSlots.popLast() {
            slot = reused
            slots[slot] = fresh
        } else {
            slot = slots.count
            slots.append(fresh)
        }
        if newest >= 0 { slots[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
        positions[key] = slot
        return evicted
    }

    /// Makes `key` the most recently used, if it is there.
    mutating func touch(_ key: Key) {
        if let slot = positions[key] { moveToFront(slot) }
    }

    /// Replaces the value of `key`, if it is there, without touching its recency.
    mutating func replace(_ value: Value, for key: Key) {
        if let slot = positions[key] { slots[slot].value = value }
    }

    /// Forgets the least recently used entry and returns it (nil when empty).
    mutating func removeOldest() -> (key: Key, value: Value)? {
        guard oldest >= 0 else { return nil }
        let key = slots[oldest].key
        return removeValue(for: key).map { (key, $0) }
    }

    /// Forgets `key`; returns its value when it was there.
    @discardableResult
    mutating func removeValue(for key: Key) -> Value? {
        guard let slot = positions.removeValue(forKey: key) else { return nil }
        unlink(slot)
        let value = slots[slot].value
        slots[slot].value = nil
        freeSlots.append(slot)
        if positions.isEmpty {
            slots.removeAll()
            freeSlots.removeAll()
        }
        return value
    }

    /// Every value, most recently used first.
    var values: [Value] {
        var result: [Value] = []
        result.reserveCapacity(count)
        var slot = newest
        while slot >= 0 {
            if let value = slots[slot].value { result.append(value) }
            slot = slots[slot].older
        }
        return result
    }

    private mutating func moveToFront(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        slots[slot].older = newest
        slots[slot].newer = -1
        if newest >= 0 { slots[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    private mutating func unlink(_ slot: Int) {
        let newer = slots[slot].newer
        let older = slots[slot].older
        if newer >= 0 { slots[newer].older = older } else { newest = older }
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
        slots[slot].newer = -1
        slots[slot].older = -1
    }
}
