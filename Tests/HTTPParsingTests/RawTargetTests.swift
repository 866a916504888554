import Testing

@testable import HTTPParsing

/// ``RawTarget/pathIsPlain``: whether the raw path has a `%`, known from the parser's check of the
/// target — the router, path parameters and access log skip their own search on it.
@Suite struct RawTargetTests {
    static let cases: [(target: String, plain: Bool, path: String)] = [
        ("/frames/abc/12", true, "/frames/abc/12"),
        ("/frames/abc/12?width=320&x=%41", true, "/frames/abc/12"),  // a `%` in the query only
        ("/frames/a%2Fb/12", false, "/frames/a%2Fb/12"),
        ("/fr%61mes/x/1?q", false, "/fr%61mes/x/1"),
        ("/x#frag%41", true, "/x"),  // a `%` after the path's end
        ("/%41", false, "/%41"),
        ("http://h?q=%41", true, "/"),  // the path added for an absolute-form target without one
        ("http://h/a%41b?c", false, "/a%41b"),
        ("*", true, "*"),
    ]

    @Test(arguments: cases.indices)
    func parsedTargetsKnowWhetherTheirPathHasAnEscape(_ index: Int) {
        let (target, plain, path) = Self.cases[index]
        let method = target == "*" ? "OPTIONS" : "GET"
        var parser = HTTPRequestParser()
        let (_, event) = parser.parse(bytes("\(method) \(target) HTTP/1.1\r\nHost: h\r\n\r\n"))
        guard case .head? = event, let head = parser.takeHead() else {
            Issue.record("no head: \(String(describing: event))")
            return
        }
        #expect(head.rawTarget.pathIsPlain == plain, "\(target)")
        #expect(String(head.rawTarget.rawPath) == path, "\(target)")
        // The same as a target given as text, whose path is searched.
        #expect(RawTarget(target).pathIsPlain == plain, "\(target)")
        #expect(RawTarget(rawPath: Substring(path)).pathIsPlain == plain, "\(target)")
    }

    /// The flag lives in the path's end: the target stays 32 bytes (a field more made copies of
    /// requests and of the parser's optional head dearer).
    @Test func theFlagAddsNoField() {
        #expect(MemoryLayout<RawTarget>.size == 32)
        let target = RawTarget(rawPath: "/a/b")
        #expect(target.pathEnd == 4 && target.pathRange == 0..<4 && target.pathByteCount == 4)
    }

    @Test func validatedGivesTheFirstEscape() {
        func validated(_ target: String, _ method: HTTPMethod = .GET) -> Int? {
            Array(target.utf8).withUnsafeBytes { RequestTarget.validated($0, method: method) }
        }
        #expect(validated("/abc") == 4)
        #expect(validated("/a%41b%42") == 2)
        #expect(validated("/a?%41") == 3)
        #expect(validated("/a%4") == nil)
        #expect(validated("/a b") == nil)
        #expect(validated("*", .OPTIONS) == 1)
        #expect(validated("*") == nil)
    }
}
