import Testing

@testable import HTTPParsing

/// ByteSearch reads eight bytes at a time; each answer is checked against a byte-by-byte
/// reference at every length from 0 to 40 and every position of the interesting byte, so that
/// the word loop and the tail loop, and carries between bytes of a word, are all exercised.
@Suite struct ByteSearchTests {
    private static func withBytes<T>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) -> T) -> T {
        // At an odd offset of a larger buffer, so that the eight-byte loads are unaligned.
        let padded = [0x41] + bytes + [0x20, 0x25, 0x2F, 0x00]
        return padded.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[1..<(1 + bytes.count)])) }
    }

    @Test func firstOffsetFindsTheFirstOccurrenceInRange() {
        for length in 0...40 {
            var bytes = [UInt8](repeating: 0x61, count: length)
            for position in 0..<length {
                bytes[position] = 0x2F
                Self.withBytes(bytes) { raw in
                    #expect(ByteSearch.firstOffset(of: 0x2F, in: raw) == position)
                    #expect(ByteSearch.firstOffset(of: 0x2F, in: raw, range: 0..<position) == nil)
                    #expect(ByteSearch.firstOffset(of: 0x2F, in: raw, range: position..<length) == position)
                    #expect(ByteSearch.firstOffset(of: 0x2F, in: raw, range: (position + 1)..<length) == nil)
                    #expect(ByteSearch.firstOffset(of: 0x23, in: raw) == nil)
                }
                bytes[position] = 0x61
            }
        }
        #expect(ByteSearch.firstOffset(of: 0x2F, in: UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
    }

    @Test func countMatchesAByteByByteCount() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...40 {
            for _ in 0..<20 {
                // Mostly slashes and their neighbours (0x2E, 0x30), 0x00, 0x7F, 0x80 and 0xFF.
                let alphabet: [UInt8] = [0x2F, 0x2F, 0x2E, 0x30, 0x00, 0x7F, 0x80, 0xFF, 0xAF, 0x61]
                let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
                let expected = bytes.filter { $0 == 0x2F }.count
                Self.withBytes(bytes) { #expect(ByteSearch.count(of: 0x2F, in: $0) == expected, "\(bytes)") }
            }
        }
        Self.withBytes([UInt8](repeating: 0x2F, count: 33)) { #expect(ByteSearch.count(of: 0x2F, in: $0) == 33) }
        Self.withBytes([UInt8](repeating: 0xFF, count: 33)) { #expect(ByteSearch.count(of: 0xFF, in: $0) == 33) }
        Self.withBytes([UInt8](repeating: 0x00, count: 17)) { #expect(ByteSearch.count(of: 0x00, in: $0) == 17) }
    }

    @Test func everyByteJSONEscapesIsFoundAtEveryPositionAndNoOther() {
        for length in 1...20 {
            for position in 0..<length {
                for byte in 0...255 {
                    // Clean bytes before the one tried; after it, ones that must be escaped too.
                    var bytes = [UInt8](repeating: 0x7E, count: length)
                    for after in (position + 1)..<max(length, position + 1) { bytes[after] = [0x22, 0x5C, 0x00][after % 3] }
                    bytes[position] = UInt8(byte)
                    let escaped = byte < 0x20 || byte == 0x7F || byte == 0x22 || byte == 0x5C
                    let expected = escaped ? position : (position + 1 < length ? position + 1 : nil)
                    Self.withBytes(bytes) { #expect(ByteSearch.firstJSONEscape(in: $0) == expected, "\(bytes)") }
                }
            }
        }
        Self.withBytes([]) { #expect(ByteSearch.firstJSONEscape(in: $0) == nil) }
        // Neighbours of the escaped bytes, and UTF-8, are clean.
        Self.withBytes(Array("!#[]~ é/frames/ab12/3?w=1".utf8)) { #expect(ByteSearch.firstJSONEscape(in: $0) == nil) }
    }

    @Test func everyByteOutsideVisibleASCIIIsFoundAtEveryPosition() {
        for length in 1...24 {
            for position in 0..<length {
                for byte in 0...255 {
                    var bytes = [UInt8](repeating: 0x7E, count: length)
                    bytes[position] = UInt8(byte)
                    let outside = byte < 0x21 || byte > 0x7E
                    Self.withBytes(bytes) { #expect(ByteSearch.containsNonVisibleASCII($0) == outside) }
                }
            }
        }
        // Visible ASCII next to the limits never counts: '!' and '~' in every position.
        for length in 0...24 {
            let bytes = (0..<length).map { UInt8($0 % 2 == 0 ? 0x21 : 0x7E) }
            Self.withBytes(bytes) { #expect(!ByteSearch.containsNonVisibleASCII($0)) }
        }
    }

    @Test func targetsWithBytesOutsideVisibleASCIIAreInvalid() {
        let good = "/frames/" + String(repeating: "ab", count: 32) + "/17"
        #expect(Array(good.utf8).withUnsafeBytes { RequestTarget.isValid($0, method: .GET) })
        for bad in [good + " ", good + "\u{7F}", "/a\u{01}b", "/caf\u{E9}", good + "%4", good + "%zz", "/%"] {
            #expect(!Array(bad.utf8).withUnsafeBytes { RequestTarget.isValid($0, method: .GET) }, "\(bad)")
        }
        #expect(Array("/a%2Fb%41".utf8).withUnsafeBytes { RequestTarget.isValid($0, method: .GET) })
    }

    @Test func targetsSplitAtTheFirstQuestionMarkBeforeAFragment() {
        let cases: [(String, String, String?)] = [
            ("/a/b", "/a/b", nil), ("/a?x=1?y#f?g", "/a", "x=1?y"), ("/a#f?x", "/a", nil),
            ("/?", "/", ""), ("?q", "/", "q"), ("#", "/", nil), ("*", "*", nil),
            ("http://h.example/p/q?r#s", "/p/q", "r"),
        ]
        for (target, path, query) in cases {
            let split = RequestTarget.split(target)
            #expect(split.path == path[...], "\(target)")
            #expect(split.query.map(String.init) == query, "\(target)")
        }
    }

    @Test func firstControlByteIsFoundAtEveryPositionWhateverFollows() {
        for length in 0...24 {
            #expect(Self.withBytes([UInt8](repeating: 0x20, count: length)) { ByteSearch.firstControlByte(in: $0) } == nil)
            for position in 0..<length {
                for byte in 0...255 {
                    // Visible bytes before it, control bytes (which could borrow) after it.
                    var bytes = [UInt8](repeating: 0x7E, count: length)
                    bytes[position] = UInt8(byte)
                    for later in (position + 1)..<max(position + 1, length) { bytes[later] = later % 2 == 0 ? 0x00 : 0x7F }
                    let expected: Int? = byte < 0x20 || byte == 0x7F ? position : (position + 1 < length ? position + 1 : nil)
                    #expect(Self.withBytes(bytes) { ByteSearch.firstControlByte(in: $0) } == expected, "\(bytes)")
                }
            }
        }
    }

    /// `nameIs` compares words (four or eight bytes, the last one overlapping): every byte value
    /// at every position of literals of every length it handles differently, against a
    /// byte-by-byte reference.
    @Test func nameIsMatchesAByteByByteComparison() {
        let literals: [StaticString] = [
            "te", "host", "close", "expect", "chunked", "keep-ali", "connection", "if-none-match",
            "content-length", "transfer-encoding", "100-continue",
        ]
        for literal in literals {
            let expected = Array(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
            for position in expected.indices {
                for byte in 0...255 {
                    var bytes = expected
                    bytes[position] = UInt8(byte)
                    let reference = zip(bytes, expected).allSatisfy { ASCII.lower($0) == $1 }
                    #expect(Self.withBytes(bytes) { HTTPRequestParser.nameIs($0, literal) } == reference, "\(bytes)")
                }
            }
            let upper = expected.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }
            #expect(Self.withBytes(upper) { HTTPRequestParser.nameIs($0, literal) })
            #expect(!Self.withBytes(expected + [0x61]) { HTTPRequestParser.nameIs($0, literal) })
        }
    }

    /// RFC 9110 `tchar` read from a bitmap: every byte value against the grammar's list.
    @Test func tokenCharsAreExactlyRFC9110s() {
        let tchar = Set(Array("!#$%&'*+-.^_`|~0123456789".utf8) + (0x41...0x5A) + (0x61...0x7A))
        for byte in 0...255 {
            #expect(ASCII.isTokenChar(UInt8(byte)) == tchar.contains(UInt8(byte)), "\(byte)")
        }
    }
}
