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

    /// `If-None-Match` is recognised in any case by its 13 bytes compared as two words; a name of
    /// the same length differing in any one byte is not it.
    @Test func ifNoneMatchNameInAnyCaseOnly() {
        let name = Array("if-none-match".utf8)
        var generator = SeededGenerator(state: 13)
        for _ in 0..<200 {
            let mixed = name.map { byte -> UInt8 in
                (byte >= 0x61 && Bool.random(using: &generator)) ? byte - 0x20 : byte
            }
            #expect(mixed.withUnsafeBytes { HTTPRequestParser.isIfNoneMatch($0) }, "\(mixed)")
        }
        for position in name.indices {
            for replacement: UInt8 in [0x41, 0x5F, 0x2D, 0x20, 0x00, 0xE9, name[position] ^ 0x20, name[position] ^ 0x01] {
                var other = name
                other[position] = replacement
                let isName = other.withUnsafeBytes { HTTPRequestParser.isIfNoneMatch($0) }
                let expected = other.map { ($0 >= 0x41 && $0 <= 0x5A) ? $0 | 0x20 : $0 } == name
                #expect(isName == expected, "\(other)")
            }
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

/// The one-pass reading of a common field line agrees with the general path.
@Suite struct FieldLineScanTests {
    /// ``ASCII/nonNameBytes(_:)`` flags exactly the bytes that are not a letter, digit or `-`, in
    /// every position of the word, whatever its neighbours.
    @Test func nonNameBytesIsExactForEveryByte() {
        func isNameByte(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D
        }
        for fill: UInt8 in [0x00, 0x2D, 0x61, 0xFF, 0x7F, 0x3A] {
            for position in 0..<8 {
                for value in 0...255 {
                    var bytes = [UInt8](repeating: fill, count: 8)
                    bytes[position] = UInt8(value)
                    let word = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
                    let flags = ASCII.nonNameBytes(word)
                    for index in 0..<8 {
                        let flagged = (flags >> (8 * UInt64(index) + 7)) & 1 == 1
                        #expect(flagged == !isNameByte(bytes[index]), "byte \(bytes[index]) at \(index)")
                        #expect((flags >> (8 * UInt64(index))) & 0x7F == 0)
                    }
                }
            }
        }
    }

    /// Random lines from an alphabet of name, value, separator and control bytes: wherever the
    /// one-pass reading finds a field line, the general path finds the same line end and offsets.
    @Test func scanAgreesWithTheGeneralPath() {
        let nameBytes = Array("aZ9-".utf8)
        let oddBytes: [UInt8] = Array("_.!\": \t,".utf8) + [0x0D, 0x0A, 0x00, 0x7F, 0x80, 0xFF, 0x1F]
        let valueBytes = Array("aZ9 \t,W/*\"-:".utf8)
        var generator = SeededGenerator(state: 0x9E37_79B9_7F4A_7C15)
        func pick(_ common: [UInt8], oddOneIn odds: Int) -> UInt8 {
            Int.random(in: 0..<odds, using: &generator) == 0
                ? oddBytes.randomElement(using: &generator)! : common.randomElement(using: &generator)!
        }
        var found = 0
        for _ in 0..<50_000 {
            var line = (0..<Int.random(in: 0...14, using: &generator)).map { _ in pick(nameBytes, oddOneIn: 40) }
            if Int.random(in: 0..<10, using: &generator) > 0 { line.append(0x3A) }
            line += (0..<Int.random(in: 0...30, using: &generator)).map { _ in pick(valueBytes, oddOneIn: 60) }
            if Int.random(in: 0..<5, using: &generator) > 0 { line += [0x0D, 0x0A] }
            line += Array("X: 1\r\n\r\n".utf8.prefix(Int.random(in: 0...8, using: &generator)))
            line.withUnsafeBytes { raw in
                guard let scan = HTTPRequestParser.scanFieldLine(raw, from: 0) else { return }
                found += 1
                let lf = ByteSearch.firstOffset(of: 0x0A, in: raw)
                #expect(lf == scan.lf, "\(line)")
                #expect(raw[scan.lf - 1] == 0x0D)
                let split = HTTPRequestParser.splitFieldLine(UnsafeRawBufferPointer(rebasing: raw[0..<(scan.lf - 1)]))
                guard case .success(let offsets) = split else {
                    Issue.record("general path refused \(line): \(split)")
                    return
                }
                #expect(offsets.nameEnd == scan.nameEnd && offsets.valueStart == scan.valueStart, "\(line)")
                #expect(offsets.valueEnd == scan.valueEnd, "\(line)")
            }
        }
        #expect(found > 1000)
    }
}

/// A reproducible xorshift64* generator for the property tests.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}
