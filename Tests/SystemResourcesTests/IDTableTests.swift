import Testing

@testable import SystemResources

/// An event loop's table by id answers exactly what a dictionary would, by `String`
/// and by the id's bytes, through growth, replacement and removals that shift runs back.
@Suite struct IDTableTests {
    /// `id`'s value looked up by its bytes, doubled where it is held (the table's own copy is
    /// changed, not the caller's).
    private static func find(_ table: IDTable<Int>, _ id: String) -> Int? {
        var table = table
        let found = Array(id.utf8).withUnsafeBytes { bytes in
            table.modify(utf8: bytes) { value -> Int in
                value *= 2
                return value / 2
            }
        }
        if let found { #expect(table[id] == found * 2, "changed in place") }
        return found
    }

    @Test func answersAsADictionaryDoesThroughInsertsReplacementsAndRemovals() {
        var table = IDTable<Int>()
        var expected: [String: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        // Short ids collide in their low hash bits often enough to build long runs: removals
        // must shift the run back, not break it.
        let ids = (0..<600).map { index in
            index % 3 == 0 ? String(index) : String(repeating: "a", count: index % 70) + "-\(index)"
        }
        for step in 0..<6000 {
            let id = ids[Int.random(in: 0..<ids.count, using: &generator)]
            if step % 3 == 2 {
                #expect(table.removeValue(for: id) == expected.removeValue(forKey: id))
            } else {
                table[id] = step
                expected[id] = step
            }
            #expect(table.count == expected.count)
        }
        for id in ids {
            #expect(table[id] == expected[id])
            #expect(Self.find(table, id) == expected[id])
        }
        // A slot holds a key and a value exactly when it holds an id: an emptied slot (removed,
        // or shifted back from) keeps no id's bytes.
        #expect(table.hashes.indices.allSatisfy { (table.hashes[$0] != 0) == !table.keys[$0].isEmpty })
        #expect(table.hashes.indices.allSatisfy { (table.hashes[$0] != 0) == (table.values[$0] != nil) })
        #expect(table.keys.filter { !$0.isEmpty }.count == expected.count)
    }

    /// Tables given one array of an id's bytes keep that array, not copies of it: the frame
    /// cache's hit tables hold every cached image's id, one table per event loop.
    @Test func tablesGivenOneKeyArrayShareItsBuffer() {
        let id = String(repeating: "0123456789abcdef", count: 4)
        let key = Array(id.utf8)
        var (first, second) = (IDTable<Int>(), IDTable<Int>())
        first.insert(1, forUTF8: key)
        second.insert(2, forUTF8: key)
        func buffer(_ table: IDTable<Int>) -> UnsafeRawPointer? {
            let key = table.keys.first { !$0.isEmpty }!
            return key.withUnsafeBytes { $0.baseAddress }
        }
        #expect(buffer(first) != nil && buffer(first) == buffer(second))
        #expect(key.withUnsafeBytes { $0.baseAddress } == buffer(first))
        #expect(first[id] == 1 && second[id] == 2)
        #expect(Self.find(first, id) == 1 && Self.find(second, id) == 2)
    }

    @Test func findsAContentIDByItsBytesAndNothingForAnotherOrAPrefix() {
        let id = String(repeating: "0123456789abcdef", count: 4)
        var table = IDTable<Int>()
        table[id] = 7
        #expect(Self.find(table, id) == 7)
        #expect(Self.find(table, String(id.dropLast())) == nil)
        #expect(Self.find(table, String(id.dropLast()) + "0") == nil)
        #expect(Self.find(table, id + "0") == nil)
        #expect(Self.find(table, "") == nil)
        table[id] = nil
        #expect(Self.find(table, id) == nil)
        #expect(table.count == 0)
    }

    @Test func hashesEveryByteOfAnIdIntoItsHash() {
        let id = Array(String(repeating: "0123456789abcdef", count: 4).utf8) + [0x7a, 0x7a, 0x7a]
        let seed: UInt64 = 0x1234_5678
        let whole = id.withUnsafeBytes { IDTable<Int>.hash($0, seed: seed) }
        for index in id.indices {
            var changed = id
            changed[index] ^= 1
            #expect(changed.withUnsafeBytes { IDTable<Int>.hash($0, seed: seed) } != whole)
        }
        #expect(id.withUnsafeBytes { IDTable<Int>.hash($0, seed: seed + 1) } != whole)
    }
}
