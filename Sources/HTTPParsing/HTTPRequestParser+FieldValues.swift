/// Byte-level helpers of ``HTTPRequestParser`` for field names and list-valued field values
/// (`Connection`, `Transfer-Encoding`, `Expect`).
extension HTTPRequestParser {
    /// ASCII case-insensitive comparison of `bytes` with a lowercase literal.
    package static func nameIs(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let literal = lowercase.utf8Start
        for index in 0..<bytes.count where ASCII.lower(bytes[index]) != literal[index] { return false }
        return true
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
