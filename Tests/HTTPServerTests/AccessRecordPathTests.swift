import Testing

@testable import HTTPServer

/// An access record's path bytes are the raw path's own when there is nothing to decode, and the
/// decoded path's otherwise — always what ``HTTPAccessRecord/path`` says.
@Suite struct AccessRecordPathTests {
    private static func record(rawPath: Substring) -> HTTPAccessRecord {
        HTTPAccessRecord(
            method: .GET, rawPath: rawPath, route: nil, routeIndex: -1, requestHeaders: HTTPHeaders(),
            requestID: .none, remoteAddress: nil, connectionID: 1, loop: 0, status: 200, bodyBytes: 0,
            durationNanoseconds: 0)
    }

    private static func bytes(_ record: HTTPAccessRecord) -> String {
        record.withPathUTF8 { String(decoding: $0, as: UTF8.self) }
    }

    @Test func pathBytesAreTheDecodedPath() {
        let target = "/frames/%66%C3%A9%20x/0?t=1"
        let cases: [(Substring, String)] = [
            (target.prefix(while: { $0 != "?" }), "/frames/fé x/0"), ("/frames/abc/12", "/frames/abc/12"),
            ("/a%2Fb%zz%", "/a/b%zz%"), ("", ""), ("-", "-"),
        ]
        for (raw, decoded) in cases {
            let record = Self.record(rawPath: raw)
            #expect(Self.bytes(record) == decoded)
            #expect(record.path == decoded)
        }
        var set = Self.record(rawPath: "/raw%41")
        set.path = "/set%41"
        #expect(Self.bytes(set) == "/set%41")
    }
}
