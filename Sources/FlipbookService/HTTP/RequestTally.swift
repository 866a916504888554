/// Counts of requests by a packed (route, method, status) key, kept so that counting one is a
/// comparison and an increment: a small direct-mapped table of the keys in use (a key's place is a
/// multiplicative digest of it), each place's count moved into a dictionary only when another key
/// takes its place. A service answers a few keys over and over, so the dictionary — hashing with
/// SipHash on every request — is touched about never.
struct RequestTally: Sendable {
    /// Places in the table (a power of two: the size of ``keys`` and ``counts``).
    static let places = Table<Int>.count
    private typealias Table<Element> = InlineArray<64, Element>
    private static let empty = UInt64.max

    /// The table, held in the tally itself: no array to check for uniqueness on every request.
    private var keys = Table<UInt64>(repeating: RequestTally.empty)
    private var counts = Table<Int>(repeating: 0)
    /// Counts of keys that lost their place.
    private var displaced: [UInt64: Int] = [:]

    /// Counts one request with `key` (any value but `UInt64.max`).
    mutating func increment(_ key: UInt64, by amount: Int = 1) {
        let place = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 58) & (Self.places - 1)
        if keys[place] == key {
            counts[place] += amount
            return
        }
        if keys[place] != Self.empty { displaced[keys[place], default: 0] += counts[place] }
        keys[place] = key
        counts[place] = amount
    }

    /// Every key counted, with its count.
    var all: [UInt64: Int] {
        var all = displaced
        for place in 0..<Self.places where keys[place] != Self.empty { all[keys[place], default: 0] += counts[place] }
        return all
    }

    /// Whether nothing was counted.
    var isEmpty: Bool { displaced.isEmpty && !(0..<Self.places).contains { keys[$0] != Self.empty } }

    /// Adds `other`'s counts.
    mutating func add(_ other: RequestTally) {
        for (key, count) in other.all { increment(key, by: count) }
    }
}
