import Testing

@testable import HTTPParsing

/// Request line, headers, Content-Length and chunked framing, connection semantics.
@Suite struct ParserFramingTests {
    @Test func simpleGetYieldsHeadThenEnd() {
        let events = parseEvents(bytes("GET /frames/a/1?x=1 HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n\r\n"))
        #expect(
            events == [
                .head(
                    method: "GET", target: "/frames/a/1?x=1", version: "HTTP/1.1", framing: .none, keepAlive: true,
                    expectsContinue: false, headers: ["Host: h", "Accept: */*"]),
                .end,
            ])
    }

    @Test func headerOrderDuplicatesAndCaseInsensitiveLookupArePreserved() throws {
        var parser = HTTPRequestParser()
        let (_, event) = parser.parse(bytes("GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-a: 2\r\nX-B:3 \r\n\r\n"))
        guard case .head? = event, let head = parser.takeHead() else { Issue.record("no head"); return }
        #expect(parser.takeHead() == nil)  // handed over once
        #expect(head.headers.map(\.name) == ["Host", "X-A", "x-a", "X-B"])
        #expect(head.headers["X-A"] == "1")
        #expect(head.headers["X-a"] == "1")
        #expect(head.headers.values(for: "x-A") == ["1", "2"])
        #expect(head.headers["x-b"] == "3")  // optional whitespace trimmed
        #expect(head.headers["missing"] == nil)
    }

    /// The parser notes the first `If-None-Match` (whatever its case) for the conditional check;
    /// a head without one notes none, and a field named alike but longer is not it.
    @Test func firstIfNoneMatchFieldIsNoted() throws {
        for (fields, index) in [
            ("Host: h\r\nIF-NONE-MATCH: \"a\"\r\nIf-None-Match: \"b\"\r\n", Int32(1)),
            ("If-None-Match: *\r\nHost: h\r\n", 0), ("Host: h\r\nIf-None-Matches: \"a\"\r\n", -1),
            ("Host: h\r\n", -1),
        ] {
            var parser = HTTPRequestParser()
            for _ in 0..<2 {  // also on the next request of the connection
                let (consumed, event) = parser.parse(bytes("GET / HTTP/1.1\r\n\(fields)\r\n"))
                guard case .head? = event, let head = parser.takeHead() else { Issue.record("no head"); return }
                #expect(head.headers.ifNoneMatchIndex == index, "\(fields)")
                #expect(consumed > 0)
                #expect(parser.parse(UnsafeRawBufferPointer(start: nil, count: 0)).event.map { "\($0)" } == "end")
            }
        }
        #expect(HTTPHeaders([("If-None-Match", "*")]).ifNoneMatchIndex == HTTPHeaders.unnotedIndex)
    }

    /// Tabs and bytes of 0x80 and above are field-value bytes anywhere in a value (RFC 9110
    /// §5.5), also past the first eight bytes that are checked together.
    @Test func tabsAndObsTextAreKeptInValues() throws {
        var parser = HTTPRequestParser()
        var request = bytes("GET / HTTP/1.1\r\nHost: h\r\nX-A: abcdefgh\tij\tklmnopqrst\t")
        request += [0x80, 0xFF, 0xC3, 0xA9] + bytes("uvwxyz~ end\r\n\r\n")
        let (_, event) = parser.parse(request)
        guard case .head? = event, let head = parser.takeHead() else {
            Issue.record("no head: \(String(describing: event))")
            return
        }
        let range = try #require(head.headers.firstValueRange(lowercasedName: bytes("x-a")))
        let value = Array(head.headers.storage[range])
        #expect(value == bytes("abcdefgh\tij\tklmnopqrst\t") + [0x80, 0xFF, 0xC3, 0xA9] + bytes("uvwxyz~ end"))
    }

    @Test func contentLengthBodyIsDeliveredThenEnd() {
        let events = parseEvents(bytes("POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhelloGET"))
        #expect(events.count == 3)
        #expect(events[1] == .body(bytes("hello")))
        #expect(events[2] == .end)
    }

    @Test func contentLengthZeroMeansNoBody() {
        let events = parseEvents(bytes("POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"))
        guard case .head(_, _, _, let framing, _, _, _) = events.first else { Issue.record("no head"); return }
        #expect(framing == .none)
        #expect(events.last == .end)
    }

    @Test func repeatedIdenticalContentLengthIsAccepted() {
        let events = parseEvents(bytes("POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"))
        #expect(events.contains(.body(bytes("abc"))))
        let listed = parseEvents(bytes("POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 3\r\n\r\nabc"))
        #expect(listed.contains(.body(bytes("abc"))))
    }

    @Test func chunkedBodyWithExtensionsAndTrailersIsDecoded() {
        let request =
            "POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n"
            + "6 ; ext\r\n world\r\n"
            + "A\r\n0123456789\r\n"
            + "0\r\nX-Checksum: abc\r\nX-Other: d\r\n\r\n"
        let events = parseEvents(bytes(request))
        guard case .head(_, _, _, let framing, _, _, _) = events.first else { Issue.record("no head"); return }
        #expect(framing == .chunked)
        #expect(Array(events.dropFirst()) == [.body(bytes("hello world0123456789")), .end])
    }

    @Test func chunkSizeIsHexAndCaseInsensitive() {
        let events = parseEvents(
            bytes(
                "POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n"
                    + "00b\r\nabcdefghijk\r\n0\r\n\r\n"))
        #expect(Array(events.dropFirst()) == [.body(bytes("abcdefghijk")), .end])
    }

    @Test func pipelinedRequestsFollowEachOther() {
        let events = parseEvents(
            bytes(
                "GET /a HTTP/1.1\r\nHost: h\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nokGET /c HTTP/1.1\r\nHost: h\r\n\r\n"
            ))
        let targets = events.compactMap { event -> String? in
            if case .head(_, let target, _, _, _, _, _) = event { return target }
            return nil
        }
        #expect(targets == ["/a", "/b", "/c"])
        #expect(events.filter { $0 == .end }.count == 3)
    }

    @Test func leadingEmptyLinesBeforeTheRequestLineAreIgnored() {
        let events = parseEvents(bytes("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"))
        #expect(events.count == 2)
        #expect(firstError(events) == nil)
    }

    @Test func http10ClosesUnlessKeepAliveIsAsked() {
        let plain = parseEvents(bytes("GET / HTTP/1.0\r\n\r\n"))
        let asked = parseEvents(bytes("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"))
        guard case .head(_, _, let version, _, let keepPlain, _, _) = plain.first,
            case .head(_, _, _, _, let keepAsked, _, _) = asked.first
        else { Issue.record("no head"); return }
        #expect(version == "HTTP/1.0")
        #expect(keepPlain == false)
        #expect(keepAsked == true)
    }

    @Test func http11KeepsAliveUnlessCloseIsSent() {
        let close = parseEvents(bytes("GET / HTTP/1.1\r\nHost: h\r\nConnection: foo, close\r\n\r\n"))
        guard case .head(_, _, _, _, let keepAlive, _, _) = close.first else { Issue.record("no head"); return }
        #expect(keepAlive == false)
    }

    @Test func expectContinueIsReportedOnlyWithABody() {
        let withBody = parseEvents(bytes("PUT /u HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n"))
        let without = parseEvents(bytes("GET /u HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n"))
        guard case .head(_, _, _, _, _, let expects, _) = withBody.first,
            case .head(_, _, _, _, _, let expectsWithout, _) = without.first
        else { Issue.record("no head"); return }
        #expect(expects)
        #expect(!expectsWithout)
    }

    @Test func expectIsIgnoredForHTTP10() {
        let events = parseEvents(bytes("PUT /u HTTP/1.0\r\nExpect: something\r\nContent-Length: 1\r\n\r\nx"))
        #expect(firstError(events) == nil)
    }

    @Test func asteriskFormIsAcceptedForOptionsOnly() {
        #expect(firstError(parseEvents(bytes("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n"))) == nil)
        #expect(firstError(parseEvents(bytes("GET * HTTP/1.1\r\nHost: h\r\n\r\n"))) == .invalidTarget)
    }

    @Test func absoluteFormIsAccepted() {
        let events = parseEvents(bytes("GET http://example.com/a/b?q=1 HTTP/1.1\r\nHost: example.com\r\n\r\n"))
        #expect(firstError(events) == nil)
        let split = RequestTarget.split("http://example.com/a/b?q=1")
        #expect(split.path == "/a/b")
        #expect(split.query == "q=1")
        #expect(RequestTarget.split("http://example.com").path == "/")
    }

    @Test func pathAndQueryArePercentDecoded() {
        // The target is kept as sent; decoding happens when the request is built (HTTPRequest's
        // `path` and `queryItems` are these two decodings).
        let events = parseEvents(bytes("GET /a%2Fb%20c%E2%82%ac+d?q=%26x+y&%2B=1 HTTP/1.1\r\nHost: h\r\n\r\n"))
        guard case .head(_, let target, _, _, _, _, _) = events.first else { Issue.record("no head"); return }
        #expect(target == "/a%2Fb%20c%E2%82%ac+d?q=%26x+y&%2B=1")
        let (path, query) = RequestTarget.split(target)
        #expect(RequestTarget.percentDecode(path) == "/a/b c€+d")  // `+` is a plus in a path
        let items = RequestTarget.queryItems(query ?? "")
        #expect(items.map(\.name) == ["q", "+"])
        #expect(items.map(\.value) == ["&x y", "1"])  // and a space in a query
        #expect(RequestTarget.percentDecode("/%e2%82%AC") == "/€")  // either case of hex digits
        #expect(RequestTarget.percentDecode("/%ff") == "/\u{FFFD}")  // invalid UTF-8 is replaced
        #expect(RequestTarget.percentDecode("/a%2") == "/a%2")  // (the parser rejects this form)
        #expect(RequestTarget.split("/p?q#frag").query == "q")
        #expect(RequestTarget.split("/p#f?g").path == "/p")
        #expect(RequestTarget.split("/p#f?g").query == nil)
        #expect(RequestTarget.split("/p??a").query == "?a")
        #expect(RequestTarget.split("*").path == "*")
        #expect(RequestTarget.split("http://h?x").path == "/")
        #expect(RequestTarget.split("http://h?x").query == "x")
        #expect(RequestTarget.split("HTTPS://h/a?b").path == "/a")
        #expect(RequestTarget.split("/é/ü?ä=ö").path == "/é/ü")  // (only from HTTPRequest(method:target:))
    }

    /// Fields are compared with the framing field of their name's length only: lines of those
    /// lengths under other names (a browser's `Accept`, `User-Agent`, `Sec-Fetch-Mode`), with
    /// values a framing field would act on, change nothing; the framing fields after them do.
    @Test func onlyFramingFieldsFrameWhateverTheOtherNamesLengths() {
        let others =
            "Hist: h2\r\nAccept: image/webp\r\nUser-Agent: close\r\nSec-Fetch-Mode: 12\r\nX-Transfer-Coding: chunked\r\n"
        let framing = "Connection: close\r\nExpect: 100-continue\r\nContent-Length: 2\r\n"
        let events = parseEvents(
            bytes("GET /a HTTP/1.1\r\nHost: h\r\n\(others)\r\nPOST /b HTTP/1.1\r\nHost: h\r\n\(others)\(framing)\r\nok"))
        let otherLines = [
            "Hist: h2", "Accept: image/webp", "User-Agent: close", "Sec-Fetch-Mode: 12", "X-Transfer-Coding: chunked",
        ]
        #expect(
            events == [
                .head(
                    method: "GET", target: "/a", version: "HTTP/1.1", framing: .none, keepAlive: true, expectsContinue: false,
                    headers: ["Host: h"] + otherLines),
                .end,
                .head(
                    method: "POST", target: "/b", version: "HTTP/1.1", framing: .contentLength(2), keepAlive: false,
                    expectsContinue: true,
                    headers: ["Host: h"] + otherLines + ["Connection: close", "Expect: 100-continue", "Content-Length: 2"]),
                .body(bytes("ok")),
                .end,
            ], "\(events)")
    }

    @Test func contentLengthWithLeadingZerosIsDecimal() {
        let events = parseEvents(bytes("POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 010\r\n\r\n0123456789"))
        guard case .head(_, _, _, let framing, _, _, _) = events.first else { Issue.record("no head"); return }
        #expect(framing == .contentLength(10))
        #expect(events.last == .end)
    }

    @Test func headerSectionLimitIsExact() {
        // The header section (field lines with their CRLFs, and the final CRLF) may be exactly the limit.
        let limits = HTTPParserLimits(maxHeaderBytes: 64)
        func request(fieldLineBytes: Int) -> [UInt8] {
            let value = String(repeating: "v", count: fieldLineBytes - "Host: ".count - 2)
            return bytes("GET / HTTP/1.1\r\nHost: \(value)\r\n\r\n")
        }
        #expect(firstError(parseEvents(request(fieldLineBytes: 62), limits: limits)) == nil)
        #expect(firstError(parseEvents(request(fieldLineBytes: 63), limits: limits)) == .headerSectionTooLarge)
    }

    @Test func requestLineLimitIsExact() {
        // The request line with its CRLF may be exactly the limit.
        let limits = HTTPParserLimits(maxRequestLineBytes: 32)
        let exact = "GET /" + String(repeating: "a", count: 32 - 16) + " HTTP/1.1\r\n"
        #expect(exact.utf8.count == 32)
        #expect(firstError(parseEvents(bytes(exact + "Host: h\r\n\r\n"), limits: limits)) == nil)
        let over = "GET /" + String(repeating: "a", count: 32 - 15) + " HTTP/1.1\r\n"
        #expect(firstError(parseEvents(bytes(over + "Host: h\r\n\r\n"), limits: limits)) == .requestLineTooLong)
    }

    @Test func parserIsIdleBetweenRequests() {
        var parser = HTTPRequestParser()
        #expect(parser.isIdle)
        _ = parser.parse(bytes("GET / HT"))
        #expect(!parser.isIdle)
    }
}
