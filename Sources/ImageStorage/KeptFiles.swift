/// Files kept within a byte budget, the least recently used removed first: their sizes, their
/// total and the order of their last use (a counter). The bookkeeping of the S3 originals cache
/// and of the derived products; their owners lock it and remove the files it gives up. Eviction
/// sorts the entries, which is cheap for the thousands of files a budget holds and happens only
/// once the total passes the budget.
public struct KeptFiles<Key: Hashable & Sendable>: Sendable {
    private struct Entry: Sendable {
        var bytes: Int
        var lastUse: UInt64
    }

    private var entries: [Key: Entry] = [:]
    private var clock: UInt64 = 0
    /// The bytes of every file kept.
    public private(set) var totalBytes = 0

    public init() {}

    /// How many files are kept.
    public var count: Int { entries.count }

    public func contains(_ key: Key) -> Bool { entries[key] != nil }

    /// The kept files whose key passes `filter`.
    public func keys(where filter: (Key) -> Bool) -> [Key] { entries.keys.filter(filter) }

    /// Records `key` as `bytes` bytes (its size replaced if it was kept) and the most recently used.
    public mutating func insert(_ key: Key, bytes: Int) {
        clock += 1
        if let old = entries[key] { totalBytes -= old.bytes }
        entries[key] = Entry(bytes: bytes, lastUse: clock)
        totalBytes += bytes
    }

    /// Marks `key` as the most recently used; false when it is not kept.
    @discardableResult
    public mutating func use(_ key: Key) -> Bool {
        guard entries[key] != nil else { return false }
        clock += 1
        entries[key]!.lastUse = clock
        return true
    }

    /// Forgets `key`; false when it was not kept.
    @discardableResult
    public mutating func remove(_ key: Key) -> Bool {
        guard let old = entries.removeValue(forKey: key) else { return false }
        totalBytes -= old.bytes
        return true
    }

    /// Forgets the least recently used files until the total is within `budget`, and returns
    /// them (the caller removes them). `kept` is never given up — the file just added — nor,
    /// without one, the most recently used, so one file larger than the budget still stays.
    public mutating func evict(toFit budget: Int, keeping kept: Key? = nil) -> [Key] {
        guard totalBytes > budget else { return [] }
        var order = entries.sorted { $0.value.lastUse < $1.value.lastUse }
        if let kept { order.removeAll { $0.key == kept } } else { _ = order.popLast() }
        var victims: [Key] = []
        for (key, entry) in order where totalBytes > budget {
            entries[key] = nil
            totalBytes -= entry.bytes
            victims.append(key)
        }
        return victims
    }
}
