/// A per-loop min-heap of connection deadlines. Entries are hints: when one fires, the loop checks
/// the connection's current deadline, so moving a deadline later costs nothing and moving it
/// earlier pushes one more entry.
struct TimerHeap {
    struct Entry {
        var deadline: Int64
        var fd: Int32
        var generation: UInt32
    }

    private var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }
    var nextDeadline: Int64? { entries.first?.deadline }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    mutating func popDue(now: Int64) -> Entry? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = parent * 2 + 1
                guard left < entries.count else { break }
                var smallest = left
                if left + 1 < entries.count, entries[left + 1].deadline < entries[left].deadline { smallest = left + 1 }
                guard entries[smallest].deadline < entries[parent].deadline else { break }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first
    }
}
