import Testing

@testable import HTTPParsing

/// `Range` and `If-Range` (RFC 9110 §13.1.5, §14) on a 10 000-byte representation: one case per
/// row, from the RFC's own examples (§14.1.2) to what is ignored (whole, 200) and what cannot be
/// satisfied (416).
@Suite struct ByteRangesTests {
    static let length = 10_000
    static let etag = "\"p-abc-1\""

    @Test(
        arguments: [
            // §14.1.2's examples on a 10 000-byte representation.
            ("bytes=0-499", ByteRangeAnswer.part(0..<500)),
            ("bytes=500-999", .part(500..<1000)),
            ("bytes=-500", .part(9500..<10_000)),
            ("bytes=9500-", .part(9500..<10_000)),
            ("bytes=0-0", .part(0..<1)),
            ("bytes=-1", .part(9999..<10_000)),
            // A last position past the end is clipped; so is a suffix longer than the file.
            ("bytes=9000-20000", .part(9000..<10_000)),
            ("bytes=0-99999999999999999999999", .part(0..<10_000)),
            ("bytes=-20000", .part(0..<10_000)),
            ("bytes=9999-9999", .part(9999..<10_000)),
            // Unit case-insensitive, whitespace around a spec and empty list elements allowed.
            ("BYTES=1-2", .part(1..<3)),
            ("bytes= 1-2 ", .part(1..<3)),
            ("bytes=,1-2,", .part(1..<3)),
            // Nothing in the file: 416.
            ("bytes=10000-", .unsatisfiable),
            ("bytes=10000-10005", .unsatisfiable),
            ("bytes=99999999999999999999999-", .unsatisfiable),
            ("bytes=-0", .unsatisfiable),
            // Several ranges: the whole file, as nginx may (no multipart/byteranges).
            ("bytes=0-0,-1", .whole),
            ("bytes=0-10,20-30", .whole),
            ("bytes=0-10, 10000-", .whole),
            // Ignored: another unit, no unit, invalid specs (last < first, signs, spaces inside).
            ("items=0-1", .whole),
            ("bytes 0-1", .whole),
            ("=0-1", .whole),
            ("bytes=", .whole),
            ("bytes=,", .whole),
            ("bytes=5-4", .whole),
            ("bytes=-", .whole),
            ("bytes=a-b", .whole),
            ("bytes=+1-2", .whole),
            ("bytes=1 -2", .whole),
            ("bytes=--5", .whole),
            ("bytes=1-2-3", .whole),
            ("bytes0-1", .whole),
            ("bytess=0-1", .whole),
        ] as [(String, ByteRangeAnswer)])
    func rangeValues(value: String, expected: ByteRangeAnswer) {
        #expect(ByteRanges.answer(range: value, length: Self.length) == expected, "\(value)")
        let headers = HTTPHeaders([("Range", value)])
        #expect(ByteRanges.answer(method: .GET, headers: headers, length: Self.length, etag: Self.etag) == expected)
        // HEAD (and any other method) ignores Range: range handling is defined for GET only.
        #expect(ByteRanges.answer(method: .HEAD, headers: headers, length: Self.length, etag: Self.etag) == .whole)
        #expect(ByteRanges.answer(method: .POST, headers: headers, length: Self.length, etag: Self.etag) == .whole)
    }

    @Test(
        arguments: [
            // (If-Range, whether the range is sent)
            ("\"p-abc-1\"", true),
            (" \"p-abc-1\" ", true),
            ("W/\"p-abc-1\"", false),  // a weak tag never matches (strong comparison)
            ("\"p-abc-2\"", false),
            ("\"p-abc-1", false),
            ("p-abc-1", false),
            ("*", false),
            ("\"p-abc-1\", \"x\"", false),  // one validator, not a list
            ("Sun, 29 Nov 2026 07:00:00 GMT", false),  // no Last-Modified is sent
            ("", false),
        ] as [(String, Bool)])
    func ifRange(value: String, holds: Bool) {
        #expect(ByteRanges.ifRangeHolds(value, etag: Self.etag) == holds, "\(value)")
        let headers = HTTPHeaders([("Range", "bytes=100-199"), ("If-Range", value)])
        let answer = ByteRanges.answer(method: .GET, headers: headers, length: Self.length, etag: Self.etag)
        #expect(answer == (holds ? .part(100..<200) : .whole), "\(value)")
    }

    @Test func fieldsThatAreNotOneRangeAreIgnored() {
        let answer = { (pairs: [(String, String)]) in
            ByteRanges.answer(method: .GET, headers: HTTPHeaders(pairs), length: Self.length, etag: Self.etag)
        }
        #expect(answer([]) == .whole)
        #expect(answer([("If-Range", Self.etag)]) == .whole)
        #expect(answer([("Range", "bytes=0-1"), ("Range", "bytes=0-1")]) == .whole)
        #expect(answer([("range", "bytes=0-1")]) == .part(0..<2))
        #expect(answer([("Range", "bytes=0-1"), ("If-Range", Self.etag), ("If-Range", Self.etag)]) == .whole)
        // An unsatisfiable range behind a failing If-Range is the whole file, not a 416.
        #expect(answer([("Range", "bytes=20000-"), ("If-Range", "\"other\"")]) == .whole)
        #expect(answer([("Range", "bytes=20000-"), ("If-Range", Self.etag)]) == .unsatisfiable)
        // An empty representation has no byte to send.
        #expect(ByteRanges.answer(range: "bytes=-5", length: 0) == .unsatisfiable)
        #expect(ByteRanges.answer(range: "bytes=0-", length: 0) == .unsatisfiable)
    }
}
