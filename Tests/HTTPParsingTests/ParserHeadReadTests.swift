import Testing

@testable import HTTPParsing

/// The head is read where it lies in each read's bytes and copied into the parser's buffer once
/// per read (``HTTPRequestParser/readHead(_:from:)``): whatever the split, the same fields, the
/// same noted `If-None-Match`, the same limits at the same byte.
@Suite struct ParserHeadReadTests {
    /// The first head parsed from `input` fed in two pieces split at `split` (whole when nil), with
    /// the bytes consumed up to its `.head` event.
    func firstHead(_ input: [UInt8], split: Int? = nil) -> (head: HTTPRequestHead?, consumed: Int) {
        var parser = HTTPRequestParser()
        var pending: [UInt8] = Array(input[0..<(split ?? input.count)])
        var fed = pending.count
        var consumedTotal = 0
        while true {
            let (consumed, event) = pending.withUnsafeBytes { parser.parse($0) }
            pending.removeFirst(consumed)
            consumedTotal += consumed
            if case .head? = event { return (parser.takeHead(), consumedTotal) }
            // No event: every byte was consumed and the parser waits for more.
            guard event == nil, fed < input.count else { return (nil, consumedTotal) }
            pending += input[fed...]
            fed = input.count
        }
    }

    static let conditional: [(fields: String, index: Int32, values: [String])] = [
        ("Host: h\r\nif-NONE-match: W/\"a-1\"\r\n", 1, ["W/\"a-1\""]),
        ("IF-NONE-MATCH: \"x\", W/\"y\"\r\nHost: h\r\nIf-None-Match: *\r\n", 0, ["\"x\", W/\"y\"", "*"]),
        ("Host: h\r\nIf-None-Match:*\r\nX-A: 1\r\nif-none-match: \t\"b\" \t\r\n", 1, ["*", "\"b\""]),
        ("Host: h\r\nIf-None-Matc: \"a\"\r\nIf-None-Match-X: \"b\"\r\n", -1, []),
    ]

    @Test(arguments: conditional.indices)
    func ifNoneMatchIsTheSameAtEverySplit(_ index: Int) throws {
        let (fields, noted, values) = Self.conditional[index]
        let input = bytes("GET /frames/a/1 HTTP/1.1\r\n\(fields)\r\nGET /next HTTP/1.1\r\nHost: h\r\n\r\n")
        let headLength = input.count - "GET /next HTTP/1.1\r\nHost: h\r\n\r\n".utf8.count
        for split in [nil] + Array(1..<headLength) {
            let (found, consumed) = firstHead(input, split: split)
            let head = try #require(found, "split at \(String(describing: split))")
            #expect(head.target == "/frames/a/1")
            #expect(head.headers.ifNoneMatchIndex == noted, "split at \(String(describing: split))")
            #expect(head.headers.values(for: "If-None-Match") == values, "split at \(String(describing: split))")
            #expect(head.headers["host"] == "h")
            #expect(consumed == headLength, "split at \(String(describing: split))")
            // The head's bytes end at its blank line: the next request is not copied into it.
            #expect(head.headers.storage.count == headLength, "split at \(String(describing: split))")
        }
    }

    /// A limit is broken at the end of the line that breaks it, whether that line arrived with the
    /// lines before it or alone — or, when a read ends inside that line past the limit, there.
    @Test func headerLimitBreaksAtTheSameByteWholeOrSplit() {
        let limits = HTTPParserLimits(maxHeaderBytes: 40)
        let head = "GET / HTTP/1.1\r\nHost: h\r\nX-A: 0123456789\r\nX-B: 0123456789\r\nX-C: 1\r\n\r\n"
        let breaking = "GET / HTTP/1.1\r\nHost: h\r\nX-A: 0123456789\r\nX-B: 0123456789\r\n".utf8.count
        let input = bytes(head)
        for split in [input.count] + Array(1..<input.count) {
            var parser = HTTPRequestParser(limits: limits)
            var total = 0
            var result: HTTPRequestParser.Event?
            let first = input[0..<split].withUnsafeBytes { parser.parse($0) }
            total += first.consumed
            result = first.event
            if result == nil {
                let second = input[split...].withUnsafeBytes { parser.parse($0) }
                total += second.consumed
                result = second.event
            }
            guard case .error(.headerSectionTooLarge)? = result else {
                Issue.record("split at \(split): \(String(describing: result))")
                continue
            }
            // The section starts after the request line (16 bytes); its 41st byte breaks it.
            let overAt = 16 + 41
            #expect(total == (split >= overAt && split < breaking ? split : breaking), "split at \(split)")
        }
    }

    /// Several heads in one read, after empty lines, and a body after its head in the same read.
    @Test func pipelinedHeadsAndBodiesInOneRead() {
        let input = bytes(
            "\r\n\r\nGET /a HTTP/1.1\r\nHost: h\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nabcd"
                + "HEAD /c HTTP/1.1\r\nHost: h\r\nIf-None-Match: \"t\"\r\n\r\n")
        let events = parseEvents(input)
        #expect(firstError(events) == nil, "\(events)")
        let targets = events.compactMap { event -> String? in
            if case .head(_, let target, _, _, _, _, _) = event { return target }
            return nil
        }
        #expect(targets == ["/a", "/b", "/c"])
        #expect(events.contains(.body(bytes("abcd"))))
        for sizes in [[1], [2, 3, 5, 7], [17], [40, 1]] {
            #expect(parseEvents(input, pieceSizes: sizes) == events, "\(sizes)")
        }
    }

    /// A line's end split between reads (CR in one, LF in the next) and a bare LF after a split.
    @Test func lineEndsSplitBetweenReads() {
        let request = "GET / HTTP/1.1\r\nHost: h\r\nIf-None-Match: \"a\"\r\n\r\n"
        let whole = parseEvents(bytes(request))
        for (offset, byte) in bytes(request).enumerated() where byte == 0x0D {
            #expect(parseEvents(bytes(request), pieceSizes: [offset + 1, 100]) == whole, "split after CR at \(offset)")
        }
        let bare = bytes("GET / HTTP/1.1\r\nHost: h\r\nX: a\n\r\n")
        for split in 1..<bare.count {
            #expect(firstError(parseEvents(bare, pieceSizes: [split, 100])) == .invalidLineEnding, "split at \(split)")
        }
    }
}
