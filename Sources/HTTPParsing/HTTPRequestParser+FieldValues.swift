/// Byte-level helpers of ``HTTPRequestParser`` for field names and list-valued field values
/// (`Connection`, `Transfer-Encoding`, `Expect`).
extension HTTPRequestParser {
    /// ASCII case-insensitive comparison of `bytes` with a lowercase literal, eight bytes (or
    /// four) at a time: the last word overlaps the one before it when the length is not a
    /// multiple (a byte compared twice compares the same).
    package static func nameIs(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        let count = bytes.count
        guard count == lowercase.utf8CodeUnitCount else { return false }
        guard count >= 4, let base = bytes.baseAddress else {
            let literal = lowercase.utf8Start
            for index in 0..<count where ASCII.lower(bytes[index]) != literal[index] { return false }
            return true
        }
        let literal = UnsafeRawPointer(lowercase.utf8Start)
        if count < 8 {
            let (last, word) = (count - 4, UInt32.self)
            return ASCII.lower(base.loadUnaligned(as: word)) == literal.loadUnaligned(as: word)
                && ASCII.lower(base.loadUnaligned(fromByteOffset: last, as: word))
                    == literal.loadUnaligned(fromByteOffset: last, as: word)
        }
        var offset = 0
        while true {
            let word = base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            guard ASCII.lower(word) == literal.loadUnaligned(fromByteOffset: offset, as: UInt64.self) else { return false }
            if offset == count - 8 { return true }
            offset = min(offset + 8, count - 8)
        }
    }

    /// Calls `body` with each comma-separated element of `value`, whitespace trimmed.
    package static func forEachListElement(
        _ value: UnsafeRawBufferPointer, keepEmpty: Bool = false,
        _ body: (UnsafeRawBufferPointer) -> Void
    ) {
        var start = 0
        var index = 0
        while index <= value.count {
            if index == value.count || value[index] == 0x2C {
                var s = start
                var e = index
                while s < e, ASCII.isWhitespace(value[s]) { s += 1 }
                while e > s, ASCII.isWhitespace(value[e - 1]) { e -= 1 }
                if s < e || keepEmpty { body(UnsafeRawBufferPointer(rebasing: value[s..<e])) }
                start = index + 1
            }
            index += 1
        }
    }
}
