/// An array kept as a binary min-heap, whatever it stores: the conforming type says how many
/// slots there are, whether one slot's item comes before another's, and how two slots are
/// exchanged (``EntryHeap`` also tells the two entries their new positions). The two repairs after
/// one slot changed, ``siftUp(_:)`` and ``siftDown(_:)``, are written once here for both heaps of
/// the cache's orders.
protocol BinaryHeapLayout {
    /// The number of slots in the heap.
    var heapCount: Int { get }
    /// Whether the item in slot `a` comes before the one in slot `b`.
    func heapSlot(_ a: Int, precedes b: Int) -> Bool
    /// Exchanges the items in slots `a` and `b`.
    mutating func swapHeapSlots(_ a: Int, _ b: Int)
}

extension BinaryHeapLayout {
    /// Moves the item in `start` towards the root while it comes before its parent.
    mutating func siftUp(_ start: Int) {
        var i = start
        while i > 0 {
            let parent = (i - 1) / 2
            guard heapSlot(i, precedes: parent) else { return }
            swapHeapSlots(i, parent)
            i = parent
        }
    }

    /// Moves the item in `start` towards the leaves while a child comes before it.
    mutating func siftDown(_ start: Int) {
        var i = start
        let count = heapCount
        while true {
            let (left, right) = (2 * i + 1, 2 * i + 2)
            var least = i
            if left < count && heapSlot(left, precedes: least) { least = left }
            if right < count && heapSlot(right, precedes: least) { least = right }
            if least == i { return }
            swapHeapSlots(i, least)
            i = least
        }
    }
}
