import Testing

@testable import HTTPParsing

/// Malformed requests, request smuggling vectors and limits: each must fail with the right error.
@Suite struct ParserRejectionTests {
    static let cases: [(String, String, HTTPParseError)] = [
        (
            "CL with TE", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
            .contentLengthWithTransferEncoding
        ),
        (
            "TE with CL", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
            .contentLengthWithTransferEncoding
        ),
        ("different CLs", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", .invalidContentLength),
        ("different CL list", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 6\r\n\r\n", .invalidContentLength),
        ("CL sign", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\n", .invalidContentLength),
        ("CL negative", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", .invalidContentLength),
        ("CL hex", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x10\r\n\r\n", .invalidContentLength),
        ("CL empty", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \r\n\r\n", .invalidContentLength),
        ("CL inner space", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1 2\r\n\r\n", .invalidContentLength),
        ("CL overflow", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n", .invalidContentLength),
        ("gzip coding", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", .unsupportedTransferEncoding),
        ("identity coding", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\n\r\n", .unsupportedTransferEncoding),
        (
            "chunked not last", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
            .unsupportedTransferEncoding
        ),
        (
            "chunked twice", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            .invalidTransferEncoding
        ),
        ("empty TE", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \r\n\r\n", .invalidTransferEncoding),
        ("TE in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", .invalidTransferEncoding),
        ("TE with space in name", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding : chunked\r\n\r\n", .invalidHeaderField),
        ("space before colon", "GET / HTTP/1.1\r\nHost : h\r\n\r\n", .invalidHeaderField),
        ("tab before colon", "GET / HTTP/1.1\r\nHost\t: h\r\n\r\n", .invalidHeaderField),
        ("obs-fold", "GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n  continued\r\n\r\n", .obsoleteLineFolding),
        ("obs-fold tab", "GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\tcontinued\r\n\r\n", .obsoleteLineFolding),
        ("empty name", "GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n", .invalidHeaderField),
        ("no colon", "GET / HTTP/1.1\r\nHost: h\r\nnocolon\r\n\r\n", .invalidHeaderField),
        ("NUL in value", "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\u{0}b\r\n\r\n", .invalidHeaderField),
        ("bare CR in value", "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\rb\r\n\r\n", .invalidLineEnding),
        // Past the value's first eight bytes and after an allowed tab (values are checked a word
        // at a time).
        ("DEL late in value", "GET / HTTP/1.1\r\nHost: h\r\nX-A: abcdefgh\tijklmnop\u{7F}q\r\n\r\n", .invalidHeaderField),
        ("NUL after a tab", "GET / HTTP/1.1\r\nHost: h\r\nX-A: abcdefghijk\t\u{0}lmnopqrstu\r\n\r\n", .invalidHeaderField),
        ("bare CR late in value", "GET / HTTP/1.1\r\nHost: h\r\nX-A: abcdefghijklmnopq\rr\r\n\r\n", .invalidLineEnding),
        ("bare LF line", "GET / HTTP/1.1\nHost: h\n\n", .invalidLineEnding),
        ("bare LF header", "GET / HTTP/1.1\r\nHost: h\nX: y\r\n\r\n", .invalidLineEnding),
        ("no Host in 1.1", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", .invalidHost),
        ("two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", .invalidHost),
        ("HTTP/2.0", "GET / HTTP/2.0\r\nHost: h\r\n\r\n", .unsupportedVersion),
        ("HTTP/1.2", "GET / HTTP/1.2\r\nHost: h\r\n\r\n", .unsupportedVersion),
        ("HTTP/0.9 form", "GET /\r\n\r\n", .malformedRequestLine),
        ("lowercase version", "GET / http/1.1\r\nHost: h\r\n\r\n", .malformedRequestLine),
        ("double space", "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", .malformedRequestLine),
        ("trailing space", "GET / HTTP/1.1 \r\nHost: h\r\n\r\n", .malformedRequestLine),
        ("bad method", "G(T / HTTP/1.1\r\nHost: h\r\n\r\n", .invalidMethod),
        ("relative target", "GET frames HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("bad escape", "GET /a%zz HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("short escape", "GET /a% HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("control in target", "GET /a\u{1}b HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("non-ASCII target", "GET /é HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("bad expectation", "PUT / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\n", .unsupportedExpectation),
        ("chunk size not hex", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", .invalidChunk),
        ("chunk size missing", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n;ext\r\n", .invalidChunk),
        (
            "chunk size overflow", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff1\r\n",
            .invalidChunk
        ),
        (
            "chunk size then junk", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5 6\r\nhello\r\n",
            .invalidChunk
        ),
        (
            "chunk data too long", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n",
            .invalidChunk
        ),
        ("chunk LF only", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n", .invalidChunk),
        (
            "chunk ext control", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;a\u{1}\r\nabc\r\n0\r\n\r\n",
            .invalidChunk
        ),
        (
            "trailer obs-fold", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n  y\r\n\r\n",
            .obsoleteLineFolding
        ),
        (
            "trailer no colon", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nbad\r\n\r\n",
            .invalidHeaderField
        ),
    ]

    @Test(arguments: cases.indices)
    func rejectedForm(_ index: Int) {
        let (name, request, expected) = Self.cases[index]
        let events = parseEvents(bytes(request))
        #expect(firstError(events) == expected, "\(name): \(events)")
    }

    /// docs/api.md: bad input never gets a 5xx, except RFC 9110's own answers for a request the server
    /// understands but does not implement: 501 (a transfer coding other than chunked, §15.6.2)
    /// and 505 (an HTTP version other than 1.x, §15.6.6).
    @Test func badInputGets4xxBut501And505() {
        for error in HTTPParseError.allCases {
            switch error {
            case .unsupportedTransferEncoding: #expect(error.statusCode == 501)
            case .unsupportedVersion: #expect(error.statusCode == 505)
            default: #expect((400..<500).contains(error.statusCode), "\(error): \(error.statusCode)")
            }
        }
    }

    @Test func errorsMapToStatuses() {
        #expect(HTTPParseError.requestLineTooLong.statusCode == 414)
        #expect(HTTPParseError.headerSectionTooLarge.statusCode == 431)
        #expect(HTTPParseError.unsupportedTransferEncoding.statusCode == 501)
        #expect(HTTPParseError.unsupportedVersion.statusCode == 505)
        #expect(HTTPParseError.unsupportedExpectation.statusCode == 417)
        #expect(HTTPParseError.contentLengthWithTransferEncoding.statusCode == 400)
        #expect(HTTPParseError.obsoleteLineFolding.statusCode == 400)
    }

    @Test func requestLineLongerThanTheLimitIs414() {
        let limits = HTTPParserLimits(maxRequestLineBytes: 64)
        let ok = "GET /" + String(repeating: "a", count: 40) + " HTTP/1.1\r\nHost: h\r\n\r\n"
        let long = "GET /" + String(repeating: "a", count: 60) + " HTTP/1.1\r\nHost: h\r\n\r\n"
        #expect(firstError(parseEvents(bytes(ok), limits: limits)) == nil)
        #expect(firstError(parseEvents(bytes(long), limits: limits)) == .requestLineTooLong)
        // Detected before the line ends, without buffering without bound.
        let endless = "GET /" + String(repeating: "a", count: 200)
        #expect(firstError(parseEvents(bytes(endless), limits: limits, pieceSizes: [7])) == .requestLineTooLong)
    }

    @Test func defaultRequestLineLimitIs8KiB() {
        let target = "/" + String(repeating: "a", count: 8 * 1024)
        #expect(firstError(parseEvents(bytes("GET \(target) HTTP/1.1\r\nHost: h\r\n\r\n"))) == .requestLineTooLong)
    }

    @Test func headerSectionLargerThanTheLimitIs431() {
        let value = String(repeating: "v", count: 17 * 1024)
        #expect(firstError(parseEvents(bytes("GET / HTTP/1.1\r\nHost: h\r\nX-Big: \(value)\r\n\r\n"))) == .headerSectionTooLarge)
        let fits = String(repeating: "v", count: 15 * 1024)
        #expect(firstError(parseEvents(bytes("GET / HTTP/1.1\r\nHost: h\r\nX-Big: \(fits)\r\n\r\n"))) == nil)
    }

    @Test func moreThan100FieldsIs431() {
        let fields = (0..<100).map { "X-\($0): v\r\n" }.joined()
        #expect(firstError(parseEvents(bytes("GET / HTTP/1.1\r\nHost: h\r\n\(fields)\r\n"))) == .headerSectionTooLarge)
        let ninetyNine = (0..<99).map { "X-\($0): v\r\n" }.joined()
        #expect(firstError(parseEvents(bytes("GET / HTTP/1.1\r\nHost: h\r\n\(ninetyNine)\r\n"))) == nil)
    }

    @Test func oversizedTrailersAre431() {
        let limits = HTTPParserLimits(maxHeaderBytes: 100)
        let trailer = "X-T: " + String(repeating: "t", count: 200) + "\r\n"
        let request = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\(trailer)\r\n"
        #expect(firstError(parseEvents(bytes(request), limits: limits)) == .headerSectionTooLarge)
    }

    @Test func overlongChunkExtensionsAreRejected() {
        let ext = String(repeating: "e", count: 5000)
        let request = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1;\(ext)\r\na\r\n0\r\n\r\n"
        #expect(firstError(parseEvents(bytes(request))) == .invalidChunk)
    }

    @Test func theParserStaysFailed() {
        var parser = HTTPRequestParser()
        _ = parser.parse(bytes("GET / HTTP/9.9\r\n"))
        #expect(parser.hasFailed)
        let (_, event) = parser.parse(bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
        guard case .error(.unsupportedVersion)? = event else {
            Issue.record("expected the same error, got \(String(describing: event))"); return
        }
    }

    @Test func smugglingWithChunkedAfterAPipelinedRequestCannotDesync() {
        // A second request hidden in the first one's Content-Length body is body, not a request.
        let hidden = "GET /admin HTTP/1.1\r\nHost: h\r\n\r\n"
        let request = "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: \(hidden.utf8.count)\r\n\r\n\(hidden)"
        let events = parseEvents(bytes(request))
        let heads = events.filter { if case .head = $0 { return true } else { return false } }
        #expect(heads.count == 1)
        #expect(events.contains(.body(bytes(hidden))))
    }
}
