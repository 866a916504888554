import FlipbookTestSupport
import Foundation
import Testing

@testable import HTTPServer

/// Responses encoded once (``HTTPPreparedResponse``) and `If-None-Match` read on the header bytes.
@Suite("Prepared responses", .ownThreads)
struct PreparedResponseTests {
    static let prepared = HTTPPreparedResponse(
        status: .ok, headers: ["Content-Type": "image/png", "ETag": "\"f-1\"", "Content-Length": "999"],
        body: Array("PNG-BYTES".utf8))

    static func router() -> Router {
        var router = Router()
        router.get("/prepared") { _, _ in .now(HTTPResponse(prepared)) }
        router.get("/prepared-extra") { _, _ in
            .now(HTTPResponse(prepared, extraHeaders: ["Content-Location": "/prepared"]))
        }
        router.get("/unprepared") { _, _ in
            var response = HTTPResponse(prepared, extraHeaders: ["X-Extra": "1"])
            response.status = .accepted
            return .now(response)
        }
        return router
    }

    @Test func aPreparedResponseIsSentWithItsEncodedHead() async throws {
        try await withTestServer(Self.router()) { server in
            let client = try RawHTTPClient(port: server.port)
            try client.send(
                "GET /prepared HTTP/1.1\r\nHost: t\r\n\r\nHEAD /prepared HTTP/1.1\r\nHost: t\r\n\r\n"
                    + "GET /prepared-extra HTTP/1.1\r\nHost: t\r\n\r\nGET /unprepared HTTP/1.1\r\nHost: t\r\n\r\n")
            let get = try client.readResponse()
            #expect(get.status == 200)
            #expect(get.text == "PNG-BYTES")
            #expect(get.header("Content-Length") == "9")
            #expect(get.headers.filter { $0.0.lowercased() == "content-length" }.count == 1)
            #expect(get.header("ETag") == "\"f-1\"")
            #expect(get.header("Content-Type") == "image/png")
            #expect(get.header("Date") != nil && get.header("Server") != nil)
            let head = try client.readResponse(head: true)
            #expect(head.status == 200 && head.header("Content-Length") == "9" && head.body.isEmpty)
            let extra = try client.readResponse()
            #expect(extra.header("Content-Location") == "/prepared" && extra.header("ETag") == "\"f-1\"")
            #expect(extra.text == "PNG-BYTES")
            let changed = try client.readResponse()
            #expect(changed.status == 202)
            #expect(changed.header("ETag") == "\"f-1\"" && changed.header("X-Extra") == "1")
            #expect(changed.text == "PNG-BYTES")
        }
    }

    @Test func aNotModifiedPreparedResponseHasNoBodyOrLength() {
        let notModified = HTTPPreparedResponse(status: .notModified, headers: ["ETag": "\"f-1\""])
        let text = String(decoding: notModified.head, as: UTF8.self)
        #expect(text == "HTTP/1.1 304 Not Modified\r\nETag: \"f-1\"\r\n")
        #expect(HTTPResponse(notModified).headerValue("ETag") == "\"f-1\"")
    }

    @Test(arguments: [
        ("\"a\"", "\"a\"", true),
        ("\"b\"", "\"a\"", false),
        ("X/\"a\"", "\"a\"", false),
        ("W/\"b\"", "\"a\"", false),
        ("W/\"a\"", "W/\"a\"", true),
        ("W/\"a\"", "\"a\"", true),
        ("\"a\"", "W/\"a\"", true),
        ("\"b\", \"a\"", "\"a\"", true),
        ("\"b\",W/\"a\"", "\"a\"", true),
        ("*", "\"anything\"", true),
        ("\"a,b\"", "\"a\"", false),
        ("\"a,b\"", "\"a,b\"", true),
        ("\"ab\"", "\"a\"", false),
        ("\"a", "\"a\"", false),
        ("garbage, \"a\"", "\"a\"", true),
        ("", "\"a\"", false),
    ])
    func ifNoneMatch(_ field: String, _ etag: String, _ matches: Bool) {
        let headers: HTTPHeaders = ["If-None-Match": field]
        #expect(headers.ifNoneMatchMatches(etag) == matches, "\(field) vs \(etag)")
    }

    @Test func ifNoneMatchReadsEveryFieldAndIgnoresOthers() {
        var headers = HTTPHeaders()
        headers.add(name: "ETag", value: "\"a\"")
        #expect(!headers.ifNoneMatchMatches("\"a\""))
        headers.add(name: "if-none-match", value: "\"x\"")
        headers.add(name: "If-None-Match", value: "\"y\", \"a\"")
        #expect(headers.ifNoneMatchMatches("\"a\""))
        #expect(!headers.ifNoneMatchMatches("\"z\""))
    }

    /// A parsed head's check starts at the field the parser noted and still reads the later ones.
    @Test func ifNoneMatchOfAParsedHeadReadsTheNotedFieldAndLaterOnes() {
        func head(_ fields: String) -> HTTPHeaders? {
            var parser = HTTPRequestParser()
            _ = parser.parse(Array("GET / HTTP/1.1\r\nHost: h\r\n\(fields)\r\n".utf8))
            return parser.takeHead()?.headers
        }
        let both = head("ETag: \"a\"\r\nif-none-match: \"x\"\r\nX: 1\r\nIf-None-Match: \"y\", W/\"a\"\r\n")
        #expect(both?.ifNoneMatchMatches("\"a\"") == true)
        #expect(both?.ifNoneMatchMatches("\"x\"") == true)
        #expect(both?.ifNoneMatchMatches("\"z\"") == false)
        #expect(head("ETag: \"a\"\r\n")?.ifNoneMatchMatches("\"a\"") == false)
    }
}
