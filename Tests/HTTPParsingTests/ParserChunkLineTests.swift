import Testing

@testable import HTTPParsing

/// The chunk-size line's limit (``HTTPParserLimits/maxChunkLineBytes``): a line of exactly the
/// limit is read, one byte more is refused, and an over-long line is refused having consumed no
/// more than the limit allows — however long the client makes it and however it is split.
@Suite struct ParserChunkLineTests {
    static let head = "POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"

    /// A chunk of three bytes whose size line (CRLF included) is `lineBytes` long, padded with
    /// leading zeros (`zeros`) or with one extension (`;x=aaa…`).
    static func chunk(lineBytes: Int, zeros: Bool) -> String {
        let line =
            zeros
            ? String(repeating: "0", count: lineBytes - 3) + "3"
            : "3;x=" + String(repeating: "a", count: lineBytes - 6)
        return line + "\r\nabc\r\n0\r\n\r\n"
    }

    @Test(arguments: [false, true])
    func aLineOfExactlyTheLimitIsRead(_ zeros: Bool) {
        let limits = HTTPParserLimits(maxChunkLineBytes: 64)
        let input = bytes(Self.head + Self.chunk(lineBytes: 64, zeros: zeros))
        for pieces in [[], [1], [7, 3], [63, 64, 65]] {
            let events = parseEvents(input, limits: limits, pieceSizes: pieces)
            #expect(Array(events.dropFirst()) == [.body(bytes("abc")), .end], "pieces \(pieces): \(events)")
        }
    }

    @Test(arguments: [false, true])
    func oneByteMoreIsRefused(_ zeros: Bool) {
        let limits = HTTPParserLimits(maxChunkLineBytes: 64)
        let input = bytes(Self.head + Self.chunk(lineBytes: 65, zeros: zeros))
        for pieces in [[], [1], [7, 3], [63, 64, 65]] {
            #expect(firstError(parseEvents(input, limits: limits, pieceSizes: pieces)) == .invalidChunk, "\(pieces)")
        }
    }

    /// 100 KB of leading zeros or of one extension, as a hostile client sends: refused once the
    /// line passes the default 4 KiB, the bytes after it never looked at.
    @Test(arguments: [false, true])
    func anOverLongLineIsRefusedAtTheLimit(_ zeros: Bool) {
        let limit = HTTPParserLimits().maxChunkLineBytes
        let head = bytes(Self.head)
        let line = bytes(Self.chunk(lineBytes: 100_000, zeros: zeros))
        var parser = HTTPRequestParser()
        let (headConsumed, headEvent) = head.withUnsafeBytes { parser.parse($0) }
        guard case .head? = headEvent, headConsumed == head.count else {
            Issue.record("no head: \(String(describing: headEvent))")
            return
        }
        let (consumed, event) = line.withUnsafeBytes { parser.parse($0) }
        guard case .error(let error)? = event else {
            Issue.record("not refused: \(String(describing: event))")
            return
        }
        #expect(error == .invalidChunk)
        #expect(consumed == limit + 1)
        #expect(parser.hasFailed)
    }

    /// Tabs and bytes of 0x80 and above are field-value bytes in an extension; other control
    /// bytes (and DEL) are refused wherever they stand in a long run.
    @Test func extensionBytesAreCheckedInLongRuns() {
        let long = String(repeating: "b", count: 37)
        let accepted = bytes(Self.head + "3;x=\(long)\t\(long)\u{80}\(long)\r\nabc\r\n0\r\n\r\n")
        #expect(Array(parseEvents(accepted).dropFirst()) == [.body(bytes("abc")), .end])
        for refused in ["\u{1}", "\u{7F}", "\n", "\u{0}"] {
            for position in [0, 5, 8, 36] {
                let value = String(long.prefix(position)) + refused + long
                let input = bytes(Self.head + "3;x=\(value)\r\nabc\r\n0\r\n\r\n")
                #expect(firstError(parseEvents(input)) == .invalidChunk, "\(refused.utf8.first!) at \(position)")
                #expect(firstError(parseEvents(input, pieceSizes: [5])) == .invalidChunk)
            }
        }
    }
}
