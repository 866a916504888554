/// Where an entry stands in each of its cache's orders (``CacheIndex``): its position in each set
/// and heap, -1 when it is not in it. Kept on the entry so that taking it out of one, or moving it
/// when it changes, costs no search.
struct IndexSlots {
    /// The orders an entry can be in.
    enum Order: Int, CaseIterable {
        case unclassified, active, byUse, waitingPlayers, waitingOthers, decodeAhead, onDemand, partial
        case decoders, idle, posters, forgettable, holders
    }

    /// One position per order, by ``Order/rawValue`` (a tuple: stored inline, no allocation).
    private var slots = (-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)

    subscript(order: Order) -> Int {
        get {
            withUnsafeBytes(of: slots) { $0.load(fromByteOffset: order.rawValue * MemoryLayout<Int>.stride, as: Int.self) }
        }
        set {
            withUnsafeMutableBytes(of: &slots) {
                $0.storeBytes(of: newValue, toByteOffset: order.rawValue * MemoryLayout<Int>.stride, as: Int.self)
            }
        }
    }
}

/// A set of entries in no particular order: insert, remove and test in O(1) (each entry keeps its
/// position, ``IndexSlots``), walk in O(count).
struct EntrySet {
    let order: IndexSlots.Order
    private(set) var entries: [ImageEntry] = []

    init(_ order: IndexSlots.Order) { self.order = order }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    func contains(_ entry: ImageEntry) -> Bool { entry.slots[order] >= 0 }

    mutating func insert(_ entry: ImageEntry) {
        guard entry.slots[order] < 0 else { return }
        entry.slots[order] = entries.count
        entries.append(entry)
    }

    mutating func remove(_ entry: ImageEntry) {
        let slot = entry.slots[order]
        guard slot >= 0 else { return }
        let last = entries.removeLast()
        if slot < entries.count {
            entries[slot] = last
            last.slots[order] = slot
        }
        entry.slots[order] = -1
    }

    mutating func set(_ entry: ImageEntry, member: Bool) {
        if member { insert(entry) } else { remove(entry) }
    }
}

/// Entries ordered by a key taken when they were last placed (a snapshot: the entry may have
/// changed since, the order is the one it had then): a binary heap whose entries know their
/// position, so that one is moved or taken out in O(log n), the first is read in O(1), and the
/// first k are listed in order in O(k log k) without disturbing it.
struct EntryHeap<Key: Comparable>: BinaryHeapLayout {
    let order: IndexSlots.Order
    private var items: [(key: Key, entry: ImageEntry)] = []

    init(_ order: IndexSlots.Order) { self.order = order }

    var count: Int { items.count }
    var isEmpty: Bool { items.isEmpty }

    func contains(_ entry: ImageEntry) -> Bool { entry.slots[order] >= 0 }

    /// The first entry and its key.
    var first: (key: Key, entry: ImageEntry)? { items.first }

    /// The key `entry` was placed with, if it is here.
    func key(of entry: ImageEntry) -> Key? {
        let slot = entry.slots[order]
        return slot >= 0 ? items[slot].key : nil
    }

    /// Places `entry` by `key`: inserted, or moved if it is here with another key.
    mutating func update(_ entry: ImageEntry, _ key: Key) {
        let slot = entry.slots[order]
        if slot < 0 {
            items.append((key, entry))
            entry.slots[order] = items.count - 1
            siftUp(items.count - 1)
        } else if items[slot].key != key {
            let wasBefore = key < items[slot].key
            items[slot].key = key
            if wasBefore { siftUp(slot) } else { siftDown(slot) }
        }
    }

    mutating func remove(_ entry: ImageEntry) {
        let slot = entry.slots[order]
        guard slot >= 0 else { return }
        entry.slots[order] = -1
        let last = items.removeLast()
        guard slot < items.count else { return }
        items[slot] = last
        last.entry.slots[order] = slot
        siftDown(slot)
        siftUp(slot)
    }

    /// Calls `body` with the entries in order, first first, while it returns true: the heap's
    /// first k in O(k log k) (a second, small heap of the positions that may come next).
    func forEachInOrder(_ body: (Key, ImageEntry) -> Bool) {
        var iterator = makeOrderedIterator()
        while let (key, entry) = iterator.next() {
            if !body(key, entry) { return }
        }
    }

    /// An iterator over the entries in order (for merging with another order).
    func makeOrderedIterator() -> OrderedIterator { OrderedIterator(items: items) }

    /// Lists a heap's entries in order without changing it: the positions that may come next (the
    /// children of those listed) wait in a heap of their own.
    struct OrderedIterator: IteratorProtocol, BinaryHeapLayout {
        fileprivate let items: [(key: Key, entry: ImageEntry)]
        private var frontier: [Int]

        fileprivate init(items: [(key: Key, entry: ImageEntry)]) {
            self.items = items
            frontier = items.isEmpty ? [] : [0]
        }

        mutating func next() -> (Key, ImageEntry)? {
            guard !frontier.isEmpty else { return nil }
            let top = frontier[0]
            let last = frontier.removeLast()
            if !frontier.isEmpty {
                frontier[0] = last
                siftDown(0)
            }
            for child in 2 * top + 1...2 * top + 2 where child < items.count {
                frontier.append(child)
                siftUp(frontier.count - 1)
            }
            return (items[top].key, items[top].entry)
        }

        var heapCount: Int { frontier.count }

        func heapSlot(_ a: Int, precedes b: Int) -> Bool { items[frontier[a]].key < items[frontier[b]].key }

        mutating func swapHeapSlots(_ a: Int, _ b: Int) { frontier.swapAt(a, b) }
    }

    var heapCount: Int { items.count }

    func heapSlot(_ a: Int, precedes b: Int) -> Bool { items[a].key < items[b].key }

    mutating func swapHeapSlots(_ a: Int, _ b: Int) {
        items.swapAt(a, b)
        items[a].entry.slots[order] = a
        items[b].entry.slots[order] = b
    }
}
