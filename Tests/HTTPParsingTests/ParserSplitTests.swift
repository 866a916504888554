import Testing

@testable import HTTPParsing

/// The parser must produce the same events however the bytes are split across reads.
@Suite struct ParserSplitTests {
    static let requests: [String] = [
        "GET /frames/abc/3?t=40&x=%20y HTTP/1.1\r\nHost: localhost\r\nAccept: image/png\r\nX-Dup: 1\r\nX-Dup: 2\r\n\r\n",
        "POST /images HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\nContent-Type: image/gif\r\n\r\nhello world",
        "PUT /images/n HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4;a=b\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-T: 1\r\n\r\n",
        "\r\nGET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
        "POST /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabcGET /y HTTP/1.1\r\nHost: h\r\n\r\n",
    ]

    @Test(arguments: requests.indices)
    func everySplitPointGivesTheSameEvents(_ index: Int) {
        let input = bytes(Self.requests[index])
        let whole = parseEvents(input)
        #expect(firstError(whole) == nil, "\(whole)")
        for split in 1..<input.count {
            let events = parseEvents(input, pieceSizes: [split, input.count])
            #expect(events == whole, "split at \(split)")
        }
    }

    @Test(arguments: requests.indices)
    func byteAtATimeGivesTheSameEvents(_ index: Int) {
        let input = bytes(Self.requests[index])
        #expect(parseEvents(input, pieceSizes: [1]) == parseEvents(input))
        #expect(parseEvents(input, pieceSizes: [2, 3, 5, 7]) == parseEvents(input))
    }

    @Test(arguments: ParserRejectionTests.cases.indices)
    func rejectionsDoNotDependOnSplits(_ index: Int) {
        let (name, request, expected) = ParserRejectionTests.cases[index]
        #expect(firstError(parseEvents(bytes(request), pieceSizes: [1])) == expected, "\(name)")
        #expect(firstError(parseEvents(bytes(request), pieceSizes: [3, 1, 4])) == expected, "\(name)")
    }
}
