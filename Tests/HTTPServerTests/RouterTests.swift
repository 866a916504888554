import HTTPParsing
import Testing

@testable import HTTPServer

@Suite struct RouterTests {
    static func makeRouter() -> Router {
        var router = Router()
        router.get("/frames/:id/:index") { _, _ in .now(HTTPResponse(status: .ok)) }
        router.get("/images") { _, _ in .now(HTTPResponse(status: .ok)) }
        router.post("/images") { _, _ in .now(HTTPResponse(status: .created)) }
        router.delete("/images/:id") { _, _ in .now(HTTPResponse(status: .noContent)) }
        return router
    }

    @Test func pathParametersAreBoundAndDecoded() {
        let router = Self.makeRouter()
        guard case .found(let route, let parameters) = router.match(.GET, rawPath: "/frames/a%2Fb/12") else {
            Issue.record("no match"); return
        }
        #expect(route.method == .GET)
        #expect(parameters["id"] == "a/b")
        #expect(parameters["index"] == "12")
        #expect(parameters["missing"] == nil)
    }

    /// Targets the parser took (``RawTarget/pathIsPlain`` known from its check) route and bind
    /// exactly as the same raw paths given as text (searched for a `%`).
    @Test func parsedTargetsRouteAsRawPaths() {
        let table = RouteTable(Self.makeRouter())
        for target in ["/frames/ab/12?x=%41", "/frames/a%2Fb/12", "/fr%61mes/x/%31", "/%69mages", "/images/a%20b"] {
            var parser = HTTPRequestParser()
            let method = target.hasPrefix("/images/") ? "DELETE" : "GET"
            let (_, event) = parser.parse(Array("\(method) \(target) HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
            guard case .head? = event, let head = parser.takeHead() else {
                Issue.record("no head for \(target)")
                continue
            }
            let rawPath = Substring(target.prefix(while: { $0 != "?" }))
            let parsed = table.match(head.method, target: head.rawTarget)
            let given = table.match(head.method, target: RawTarget(rawPath: rawPath))
            guard case .found(let route, let parameters) = parsed, case .found(let expected, let bound) = given else {
                Issue.record("\(target): \(parsed) / \(given)")
                continue
            }
            #expect(route.pattern == expected.pattern, "\(target)")
            #expect(parameters.map { "\($0.name)=\($0.value)" } == bound.map { "\($0.name)=\($0.value)" }, "\(target)")
            for name in ["id", "index"] {
                #expect(parameters.nonNegativeInteger(name) == bound.nonNegativeInteger(name), "\(target) \(name)")
                var raw: [UInt8]?
                var expectedRaw: [UInt8]?
                let found = parameters.withUndecodedValue(name) { raw = Array($0) }
                let expectedFound = bound.withUndecodedValue(name) { expectedRaw = Array($0) }
                #expect(found == expectedFound && raw == expectedRaw, "\(target) \(name)")
            }
        }
    }

    @Test func boundParametersDecodeOnlyWhatHasEscapesAndIterateInPatternOrder() {
        var router = Router()
        router.get("/a/:one/b/:two/:three") { _, _ in .now(HTTPResponse(status: .ok)) }
        router.get("/frames/:id/:index") { _, _ in .now(HTTPResponse(status: .ok)) }
        let long = String(repeating: "0123456789abcdef", count: 4)
        guard case .found(_, let plain) = router.match(.GET, rawPath: Substring("/frames/\(long)/7")) else {
            Issue.record("no match"); return
        }
        #expect(plain["id"] == long)
        #expect(plain["index"] == "7")
        #expect(plain.count == 2)
        // A percent-encoded id routes to the same frame route, decoded (UTF-8 included).
        guard case .found(let route, let encoded) = router.match(.GET, rawPath: "/frames/%66%C3%A9%20x/0") else {
            Issue.record("no match"); return
        }
        #expect(route.pattern == "/frames/:id/:index")
        #expect(encoded["id"] == "fé x")
        // More than two parameters, in the middle of literals; iteration decodes each value.
        guard case .found(_, let three) = router.match(.GET, rawPath: "/a/x%2Fy/b/2/%7Ez") else {
            Issue.record("no match"); return
        }
        #expect(three["one"] == "x/y")
        #expect(three["two"] == "2")
        #expect(three["three"] == "~z")
        #expect(three.map(\.name) == ["one", "two", "three"])
        #expect(three.map(\.value) == ["x/y", "2", "~z"])
        // Parameters given by hand (tests of handlers) behave the same.
        let given = HTTPPathParameters([(name: "id", value: "a/b")])
        #expect(given["id"] == "a/b")
        #expect(given["index"] == nil)
        #expect(given.count == 1)
    }

    @Test func requestPathIsDecodedWhenAskedAndCanBeSet() {
        var request = HTTPRequest(method: .GET, target: "/frames/%61b/1?t=2")
        #expect(request.path == "/frames/ab/1")
        request.path = "/other"
        #expect(request.path == "/other")
        var record = HTTPAccessRecord(
            method: .GET, rawPath: "/x%20y", route: nil, routeIndex: -1,
            requestHeaders: HTTPHeaders(), requestID: .none, remoteAddress: nil,
            connectionID: 1, loop: 0, status: 200, bodyBytes: 0,
            durationNanoseconds: 1_500_000_123)
        #expect(record.path == "/x y")
        #expect(record.pathByteCountBound >= record.path.utf8.count)
        record.path = "-"
        #expect(record.path == "-")
        #expect(record.pathByteCountBound == 1)
        #expect(record.duration == .nanoseconds(1_500_000_123))
        record.duration = .milliseconds(2)
        #expect(record.durationNanoseconds == 2_000_000)
    }

    @Test func unknownPathIsNotFound() {
        let router = Self.makeRouter()
        guard case .notFound = router.match(.GET, rawPath: "/frames/a") else { Issue.record("expected 404"); return }
        guard case .notFound = router.match(.GET, rawPath: "/frames/a/1/2") else { Issue.record("expected 404"); return }
        guard case .notFound = router.match(.GET, rawPath: "/frames//1") else { Issue.record("empty parameter"); return }
        // Split no further than the longest route: many more segments, or one more, still 404.
        for path: Substring in ["/frames/a/1/2/3/4/5/6/7/8/9", "/a/b/c/d", "////", "/frames/a/1/"] {
            guard case .notFound = router.match(.GET, rawPath: path) else { Issue.record("expected 404: \(path)"); return }
        }
        guard case .found = router.match(.GET, rawPath: "/frames/a/1") else { Issue.record("expected a match"); return }
    }

    @Test func knownPathWithOtherMethodListsAllowedMethods() {
        let router = Self.makeRouter()
        guard case .methodNotAllowed(let allowed) = router.match(.PUT, rawPath: "/images") else {
            Issue.record("expected 405"); return
        }
        #expect(allowed == [.GET, .HEAD, .POST])
    }

    @Test func headFallsBackToGet() {
        let router = Self.makeRouter()
        guard case .found(let route, _) = router.match(.HEAD, rawPath: "/images") else { Issue.record("no match"); return }
        #expect(route.method == .GET)
        guard case .methodNotAllowed = router.match(.HEAD, rawPath: "/images/x") else { Issue.record("expected 405"); return }
    }

    @Test func headPrefersItsOwnRouteEvenWhenRegisteredAfterTheGetRoute() {
        var router = Router()
        router.get("/things/:id") { _, _ in .now(HTTPResponse(status: .ok)) }
        router.on(.HEAD, "/things/:id") { _, _ in .now(HTTPResponse(status: .noContent)) }
        router.post("/posts/:id") { _, _ in .now(HTTPResponse(status: .created)) }
        guard case .found(let head, let parameters) = router.match(.HEAD, rawPath: "/things/a%2Fb") else {
            Issue.record("no match"); return
        }
        #expect(head.method == .HEAD)
        #expect(parameters["id"] == "a/b")
        guard case .found(let get, _) = router.match(.GET, rawPath: "/things/x") else { Issue.record("no match"); return }
        #expect(get.method == .GET)
        guard case .methodNotAllowed(let allowed) = router.match(.HEAD, rawPath: "/posts/1") else {
            Issue.record("expected 405"); return
        }
        #expect(allowed == [.POST])
    }

    @Test func literalSegmentsMatchPercentEncodedForms() {
        let router = Self.makeRouter()
        guard case .found = router.match(.GET, rawPath: "/%69mages") else { Issue.record("no match"); return }
        guard case .found(_, let parameters) = router.match(.GET, rawPath: "/fr%61mes/x/1") else {
            Issue.record("no match"); return
        }
        #expect(parameters["id"] == "x")
    }

    /// Literals are compared as bytes: same length and same bytes, nothing less; a parameter's
    /// segment must not be empty; empty literal segments (a trailing `/`) match only empty ones.
    @Test func literalSegmentsMatchExactlyAndParametersAreNeverEmpty() {
        var router = Self.makeRouter()
        router.get("/a//b/") { _, _ in .now(HTTPResponse(status: .ok)) }
        for path in ["/image", "/imagess", "/Images", "/imagez", "/frame/x/1", "/framesx/x/1", "/frames//1", "/frames/x/"] {
            if case .found = router.match(.GET, rawPath: Substring(path)) { Issue.record("\(path) matched") }
        }
        guard case .found = router.match(.GET, rawPath: "/a//b/") else { Issue.record("no match"); return }
        if case .found = router.match(.GET, rawPath: "/a/x/b/") { Issue.record("/a/x/b/ matched") }
        if case .found = router.match(.GET, rawPath: "/a//b/x") { Issue.record("/a//b/x matched") }
    }

    @Test func defaultErrorBodiesAreProblemDocuments() {
        let router = Self.makeRouter()
        let request = HTTPRequest(method: .PUT, target: "/images")
        let notFound = router.notFoundResponse(request)
        #expect(notFound.status == .notFound)
        #expect(notFound.headers["Content-Type"] == "application/problem+json")
        let text = String(decoding: notFound.body, as: UTF8.self)
        #expect(text.contains("\"type\":\"about:blank\""))
        #expect(text.contains("\"status\":404"))
        #expect(text.contains("\"title\":\"Not Found\""))
        let notAllowed = router.methodNotAllowedResponse(request, [.GET])
        #expect(notAllowed.status == .methodNotAllowed)
    }

    @Test func requestDecodesPathAndQuery() {
        let request = HTTPRequest(method: .GET, target: "/frames/a%20b?t=40&x=1+2&x=%26&flag")
        #expect(request.path == "/frames/a b")
        #expect(request.query("t") == "40")
        #expect(request.queryItems.map(\.name) == ["t", "x", "x", "flag"])
        #expect(request.queryItems.map(\.value) == ["40", "1 2", "&", ""])
    }

    @Test func problemDetailsEscapeJSON() {
        let response = HTTPResponse.problem(.badRequest, detail: "a \"quoted\" \\ line\nbreak\u{1}")
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(
            text == #"{"type":"about:blank","title":"Bad Request","status":400,"detail":"a \"quoted\" \\ line\nbreak\u0001"}"#)
    }

    @Test func responseHeadersCannotSplitAResponse() {
        var headers = HTTPHeaders()
        headers.add(name: "X-Evil", value: "a\r\nSet-Cookie: x")
        #expect(headers["x-evil"] == "a  Set-Cookie: x")
        headers.set(name: "X-Evil", value: "b")
        #expect(headers.values(for: "X-Evil") == ["b"])
        headers.remove(name: "x-evil")
        #expect(headers.isEmpty)
    }

    @Test func responseHeadCarriesLengthFieldsAndConnection() {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "image/png")
        headers.add(name: "Content-Length", value: "99")  // replaced by the body's length
        let response = HTTPResponse(status: .ok, headers: headers, body: [1, 2, 3])
        var head: [UInt8] = []
        ResponseSerializer.appendStatusAndFields(of: response, sendsBody: true, to: &head)
        ResponseSerializer.appendEnd(.close, to: &head)
        #expect(
            String(decoding: head, as: UTF8.self)
                == "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: image/png\r\nConnection: close\r\n\r\n")
        var notModified: [UInt8] = []
        ResponseSerializer.appendStatusAndFields(of: HTTPResponse(status: .notModified), sendsBody: false, to: &notModified)
        ResponseSerializer.appendEnd(.none, to: &notModified)
        #expect(String(decoding: notModified, as: UTF8.self) == "HTTP/1.1 304 Not Modified\r\n\r\n")
        var headOwnLength: [UInt8] = []
        ResponseSerializer.appendStatusAndFields(
            of: HTTPResponse(status: .ok, headers: ["Content-Length": "7"]),
            sendsBody: false, to: &headOwnLength)
        #expect(String(decoding: headOwnLength, as: UTF8.self) == "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n")
    }

    @Test func dateIsIMFFixdate() {
        #expect(String(decoding: HTTPDateCache.format(784_111_777), as: UTF8.self) == "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n")
    }

    @Test func optionsIsAnsweredForKnownPathsOnlyWhenTheRouterHasAnOptionsAnswer() throws {
        var router = Self.makeRouter()
        guard case .methodNotAllowed(let before) = router.match(.OPTIONS, rawPath: "/images") else {
            Issue.record("without optionsResponse OPTIONS is a method like any other"); return
        }
        #expect(before == [.GET, .HEAD, .POST])
        router.optionsResponse = { _, allowed in
            HTTPResponse(status: .noContent, headers: ["Allow": allowed.map(\.rawValue).joined(separator: ", ")])
        }
        guard case .found(let route, _) = router.match(.OPTIONS, rawPath: "/images") else {
            Issue.record("expected the OPTIONS answer"); return
        }
        guard case .collect(let handler) = route.action,
            case .now(let response) = handler(HTTPRequest(method: .OPTIONS, target: "/images"), HTTPResponder { _ in })
        else {
            Issue.record("expected an immediate answer"); return
        }
        #expect(response.status == .noContent)
        #expect(response.headers["Allow"] == "GET, HEAD, POST, OPTIONS")
        // Unknown paths stay 404; other methods now list OPTIONS in their 405.
        guard case .notFound = router.match(.OPTIONS, rawPath: "/nowhere") else { Issue.record("expected 404"); return }
        guard case .methodNotAllowed(let allowed) = router.match(.PUT, rawPath: "/frames/x/1") else {
            Issue.record("expected 405"); return
        }
        #expect(allowed == [.GET, .HEAD, .OPTIONS])
        // A route of its own for OPTIONS wins.
        router.on(.OPTIONS, "/images") { _, _ in .now(HTTPResponse(status: .ok)) }
        guard case .found(let own, _) = router.match(.OPTIONS, rawPath: "/images"), own.segments.count == 1 else {
            Issue.record("expected the explicit OPTIONS route"); return
        }
    }

    @Test func routesStartingWithAParameterAreTriedInRegistrationOrderWithLiteralOnes() {
        var router = Router()
        router.get("/:tenant/items") { _, _ in .now(HTTPResponse(status: .ok)) }
        router.get("/images/items") { _, _ in .now(HTTPResponse(status: .ok)) }
        router.get("/images/:id") { _, _ in .now(HTTPResponse(status: .ok)) }
        router.post("/frames/:id") { _, _ in .now(HTTPResponse(status: .ok)) }
        func pattern(_ method: HTTPMethod, _ path: Substring) -> String? {
            guard case .found(let route, _) = router.match(method, rawPath: path) else { return nil }
            return route.pattern
        }
        // The route registered first wins, whichever kind its first segment is.
        #expect(pattern(.GET, "/images/items") == "/:tenant/items")
        #expect(pattern(.GET, "/images/x") == "/images/:id")
        #expect(pattern(.GET, "/anyone/items") == "/:tenant/items")
        #expect(pattern(.GET, "/anyone/x") == nil)
        // A first segment with escapes is compared once decoded, against every route of its length.
        #expect(pattern(.GET, "/%69mages/x") == "/images/:id")
        #expect(pattern(.GET, "/%69mages/items") == "/:tenant/items")
        // Paths of another length, or longer than any route, find nothing.
        #expect(pattern(.GET, "/images/x/y/z/w") == nil)
        guard case .methodNotAllowed(let allowed) = router.match(.GET, rawPath: "/frames/x") else {
            Issue.record("expected 405"); return
        }
        #expect(allowed == [.POST])
    }

    @Test func integerParametersAreReadFromTheRawPath() {
        let router = Self.makeRouter()
        func index(_ path: Substring) -> Int? {
            guard case .found(_, let parameters) = router.match(.GET, rawPath: path) else { return nil }
            return parameters.nonNegativeInteger("index")
        }
        #expect(index("/frames/a/0") == 0)
        #expect(index("/frames/a/12") == 12)
        #expect(index("/frames/a/%31%32") == 12)
        #expect(index("/frames/a/999999999999999999") == 999_999_999_999_999_999)
        #expect(index("/frames/a/1000000000000000000") == nil)  // 19 digits
        #expect(index("/frames/a/-1") == nil)
        #expect(index("/frames/a/1a") == nil)
        #expect(index("/frames/a/%2B1") == nil)
        #expect(HTTPPathParameters([(name: "index", value: "42")]).nonNegativeInteger("index") == 42)
        #expect(HTTPPathParameters([(name: "index", value: "4 2")]).nonNegativeInteger("index") == nil)
        #expect(HTTPPathParameters().nonNegativeInteger("index") == nil)
    }

    @Test func methodsCompareByTheirTokens() {
        #expect(HTTPMethod(rawValue: "GET") == .GET)
        #expect(HTTPMethod.GET == HTTPMethod(rawValue: "GET"))
        #expect(HTTPMethod(rawValue: "GET").hashValue == HTTPMethod.GET.hashValue)
        #expect(HTTPMethod.GET != .HEAD)
        #expect(HTTPMethod(rawValue: "get") != .GET)
        #expect(HTTPMethod(rawValue: "PURGE") == HTTPMethod(rawValue: "PURGE"))
        #expect(Set([HTTPMethod.GET, HTTPMethod(rawValue: "GET"), .HEAD]).count == 2)
    }
}
