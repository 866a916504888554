/// Copies of a file with one run of bytes overwritten by noise, for tests that compare two ways
/// of reading damaged data: deterministic (seeded), each cut somewhere in `range`.
public enum DamagedCopies {
    /// `count` copies of `bytes`, copy i with `length` bytes from a random offset in `range`
    /// (clamped to the file) replaced by noise; each with the offset of its damage.
    public static func of(
        _ bytes: [UInt8], count: Int, seed: UInt64, in range: Range<Int>, length: Int = 64
    ) -> [(at: Int, bytes: [UInt8])] {
        precondition(!range.isEmpty && range.upperBound <= bytes.count, "damage outside the file")
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            var damaged = bytes
            let at = range.lowerBound + Int(generator.next() % UInt64(range.count))
            for i in at..<min(bytes.count, at + length) { damaged[i] = UInt8(truncatingIfNeeded: generator.next()) }
            return (at, damaged)
        }
    }
}
