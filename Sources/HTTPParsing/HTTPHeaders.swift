/// An ordered list of HTTP header fields with case-insensitive name lookup.
///
/// Order and duplicates are preserved exactly as received or added. Request headers share one
/// byte buffer with the request head (no per-field allocation); response headers are kept as
/// ready-to-send `Name: value\r\n` lines, so writing them is a single copy.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// Byte offsets of one field inside `storage`.
    package struct Field: Sendable {
        package var nameStart: Int32
        package var nameEnd: Int32
        package var valueStart: Int32
        package var valueEnd: Int32
    }

    package var storage: [UInt8]
    package var fields: [Field]
    /// True when `storage` is exactly the fields as `Name: value\r\n` lines, in order.
    package var isSerialized: Bool
    /// The index in `fields` of the first `If-None-Match` field, noted by the parser as it met
    /// the line (-1: none), so that a conditional request's check compares no other name;
    /// ``unnotedIndex`` for headers built otherwise (their names are compared).
    package var ifNoneMatchIndex: Int32

    /// ``ifNoneMatchIndex`` of headers the parser did not make.
    @inlinable package static var unnotedIndex: Int32 { -2 }

    /// An empty header list.
    public init() {
        storage = []
        fields = []
        isSerialized = true
        ifNoneMatchIndex = Self.unnotedIndex
    }

    /// Headers from name/value pairs, in order.
    public init(_ pairs: [(String, String)]) {
        self.init()
        for (name, value) in pairs { add(name: name, value: value) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// Headers that index into a parsed request head.
    package init(parsedStorage: [UInt8], fields: [Field], ifNoneMatchIndex: Int32 = unnotedIndex) {
        storage = parsedStorage
        self.fields = fields
        isSerialized = false
        self.ifNoneMatchIndex = ifNoneMatchIndex
    }

    /// The number of fields, counting duplicates.
    public var count: Int { fields.count }
    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// The value of the first field called `name` (compared case-insensitively), or nil.
    public subscript(name: String) -> String? {
        guard let index = firstIndex(of: name) else { return nil }
        return value(at: index)
    }

    /// Every value of the fields called `name`, in order.
    public func values(for name: String) -> [String] {
        var result: [String] = []
        for index in fields.indices where nameEquals(index, name) { result.append(value(at: index)) }
        return result
    }

    /// Whether any field is called `name`.
    public func contains(_ name: String) -> Bool { firstIndex(of: name) != nil }

    /// Appends a field. CR, LF and NUL in the name or value are replaced by spaces so that a
    /// header can never split a response.
    public mutating func add(name: String, value: String) {
        if !isSerialized { reserialize() }
        let nameStart = storage.count
        appendSanitized(name)
        let nameEnd = storage.count
        storage.append(0x3A)
        storage.append(0x20)
        let valueStart = storage.count
        appendSanitized(value)
        let valueEnd = storage.count
        storage.append(0x0D)
        storage.append(0x0A)
        fields.append(
            Field(
                nameStart: Int32(nameStart), nameEnd: Int32(nameEnd),
                valueStart: Int32(valueStart), valueEnd: Int32(valueEnd)))
    }

    /// Replaces every field called `name` by one field with `value` (appended at the end).
    public mutating func set(name: String, value: String) {
        remove(name: name)
        add(name: name, value: value)
    }

    /// Removes every field called `name`.
    public mutating func remove(name: String) {
        guard firstIndex(of: name) != nil else { return }
        let kept = self.filter { !Self.asciiCaseInsensitiveEquals($0.name, name) }
        self = HTTPHeaders(kept.map { ($0.name, $0.value) })
    }

    /// The fields in order, as name/value pairs.
    public func makeIterator() -> AnyIterator<(name: String, value: String)> {
        var index = 0
        return AnyIterator {
            guard index < self.fields.count else { return nil }
            defer { index += 1 }
            return (self.name(at: index), self.value(at: index))
        }
    }

    public var description: String {
        map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    // MARK: - Internals

    package func name(at index: Int) -> String {
        let field = fields[index]
        return string(Int(field.nameStart), Int(field.nameEnd))
    }

    package func value(at index: Int) -> String {
        let field = fields[index]
        return string(Int(field.valueStart), Int(field.valueEnd))
    }

    private func string(_ start: Int, _ end: Int) -> String {
        storage.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<end]), as: UTF8.self)
        }
    }

    /// The byte range in ``storage`` of the first value of the field whose name, lower-cased,
    /// is `lowercasedName` (no allocation; the hot path's look-ups).
    package func firstValueRange(lowercasedName: [UInt8]) -> Range<Int>? {
        storage.withUnsafeBufferPointer { buffer in
            for field in fields {
                let length = Int(field.nameEnd - field.nameStart)
                guard length == lowercasedName.count else { continue }
                var offset = Int(field.nameStart)
                var equal = true
                for byte in lowercasedName {
                    if ASCII.lower(buffer[offset]) != byte { equal = false; break }
                    offset += 1
                }
                if equal { return Int(field.valueStart)..<Int(field.valueEnd) }
            }
            return nil
        }
    }

    package func firstIndex(of name: String) -> Int? {
        for index in fields.indices where nameEquals(index, name) { return index }
        return nil
    }

    package func nameEquals(_ index: Int, _ name: String) -> Bool {
        let field = fields[index]
        let length = Int(field.nameEnd - field.nameStart)
        var name = name
        return name.withUTF8 { nameBytes in
            guard nameBytes.count == length else { return false }
            return storage.withUnsafeBufferPointer { buffer in
                var offset = Int(field.nameStart)
                for byte in nameBytes {
                    if ASCII.lower(buffer[offset]) != ASCII.lower(byte) { return false }
                    offset += 1
                }
                return true
            }
        }
    }

    /// Appends the fields as `Name: value\r\n` lines to `out`.
    package func serialize(into out: inout [UInt8]) {
        if isSerialized {
            out.append(contentsOf: storage)
            return
        }
        storage.withUnsafeBufferPointer { buffer in
            for field in fields {
                out.append(contentsOf: buffer[Int(field.nameStart)..<Int(field.nameEnd)])
                out.append(0x3A)
                out.append(0x20)
                out.append(contentsOf: buffer[Int(field.valueStart)..<Int(field.valueEnd)])
                out.append(0x0D)
                out.append(0x0A)
            }
        }
    }

    private mutating func reserialize() {
        let pairs = self.map { ($0.name, $0.value) }
        self = HTTPHeaders()
        for (name, value) in pairs { add(name: name, value: value) }
    }

    private mutating func appendSanitized(_ text: String) {
        for byte in text.utf8 {
            storage.append(byte == 0x0D || byte == 0x0A || byte == 0 ? 0x20 : byte)
        }
    }

    package static func asciiCaseInsensitiveEquals(_ a: String, _ b: String) -> Bool {
        let x = a.utf8
        let y = b.utf8
        guard x.count == y.count else { return false }
        return zip(x, y).allSatisfy { ASCII.lower($0) == ASCII.lower($1) }
    }
}

/// Byte classes used by the parser and header lookup.
package enum ASCII {
    @inline(__always)
    package static func lower(_ byte: UInt8) -> UInt8 {
        (byte &- 0x41) < 26 ? byte | 0x20 : byte
    }

    /// Every byte of `word` lower-cased (`A`–`Z` only): a byte's high bit set when it is one,
    /// moved down to 0x20. No carry crosses a byte (each sum stays below 0x100).
    @inline(__always)
    package static func lower<Word: FixedWidthInteger & UnsignedInteger>(_ word: Word) -> Word {
        let ones = Word.max / 0xFF
        let heptets = word & (ones &* 0x7F)
        let upper = (heptets &+ ones &* 0x3F) & ~(heptets &+ ones &* 0x25) & ~word & (ones &* 0x80)
        return word | (upper >> 2)
    }

    /// A high bit in each byte of `word` that is not a letter, a digit or `-` (the bytes of every
    /// common field name; the other `tchar`s are read one at a time). Exact for every byte: no
    /// sum below carries into the next byte (each stays below 0x100).
    @inline(__always)
    package static func nonNameBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        // Below 0x80, letters lower-cased (bytes of 0x80 and above are refused by `~word` below).
        let low = (word | ones &* 0x20) & (ones &* 0x7F)
        let letters = (low &+ ones &* (0x80 - 0x61)) & ~(low &+ ones &* (0x7F - 0x7A))
        let digits = (low &+ ones &* (0x80 - 0x30)) & ~(low &+ ones &* (0x7F - 0x39))
        let dash = ~((low ^ ones &* 0x2D) &+ ones &* 0x7F)
        // Digits and `-` have bit 5 set before the lower-casing; the control bytes that `| 0x20`
        // turns into them (0x10–0x19, 0x0D) do not. `<< 2` moves each byte's bit 5 to its bit 7.
        let accepted = (letters | (digits | dash) & (word << 2)) & ~word
        return ~accepted & (ones &* 0x80)
    }

    /// RFC 9110 `tchar`: the bytes allowed in a method or field name.
    @inline(__always)
    package static func isTokenChar(_ byte: UInt8) -> Bool {
        // One bit per byte below 128: digits, letters and ! # $ % & ' * + - . ^ _ ` | ~.
        let bits: UInt64 = byte < 64 ? 0x03FF_6CFA_0000_0000 : 0x57FF_FFFF_C7FF_FFFE
        return byte < 128 && (bits >> UInt64(byte & 63)) & 1 != 0
    }

    /// RFC 9110 `field-vchar` / SP / HTAB: the bytes allowed in a field value.
    @inline(__always)
    package static func isFieldValueChar(_ byte: UInt8) -> Bool {
        byte >= 0x20 ? byte != 0x7F : byte == 0x09
    }

    @inline(__always)
    package static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// The value of a hexadecimal digit, or nil.
    @inline(__always)
    package static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case 0x30...0x39: return Int(byte - 0x30)
        case 0x41...0x46: return Int(byte - 0x41 + 10)
        case 0x61...0x66: return Int(byte - 0x61 + 10)
        default: return nil
        }
    }
}
