import FlipbookTestSupport
import Foundation
import HTTPServer
import ServiceTestSupport
import SourceRules
import Testing
import URLSigning

@testable import FlipbookService

/// `security.urlKeys` over HTTP: which requests need a signature, and the 403s.
@Suite(.serialized, .ownThreads)
struct SignedRequestTests {
    static let keys = ["736563726574:68656c6c6f", "6f74686572:73616c74"]
    static let signer = URLSignature(keys: [URLSigningKey(keys[0])!])
    static let rotated = URLSignature(keys: [URLSigningKey(keys[1])!])

    @Test func theDefaultPolicyCoversRenditionsAndSourcesOnly() throws {
        let policy = SignedRequestPolicy(signature: Self.signer, routes: ["renditions", "previews", "storyboards", "sources"])
        func needs(_ method: HTTPMethodName, _ route: String, _ names: [String], url: Bool = false) -> Bool {
            policy.needsSignature(method: method.value, route: route, parameters: names, isURLSource: url)
        }
        #expect(!needs(.get, "/frames/:id/:index", []))
        #expect(!needs(.get, "/frames/:id/:index", ["r"]), "a preset is not signed")
        #expect(!needs(.get, "/frames/:id", ["t"]))
        for parameter in ["width", "height", "dpr", "fit", "enlarge", "format", "quality"] {
            #expect(needs(.get, "/frames/:id/:index", [parameter]), "\(parameter)")
            #expect(needs(.head, "/frames/:id", ["t", parameter]), "\(parameter)")
            #expect(needs(.get, "/images/:id", [parameter]), "\(parameter)")
        }
        #expect(!needs(.get, "/images/:id", []))
        #expect(needs(.get, "/images/:id/preview", []))
        #expect(needs(.get, "/images/:id/storyboard.vtt", []))
        #expect(needs(.post, "/images", [], url: true))
        #expect(needs(.put, "/images/:id", [], url: true))
        #expect(!needs(.post, "/images", []), "uploads of bytes are not in the default")
        #expect(needs(.post, "/images/:id/refresh", []))
        #expect(!needs(.get, "/healthz", []))
        let none = SignedRequestPolicy(signature: URLSignature(keys: []), routes: ["frames"])
        #expect(!none.needsSignature(method: .GET, route: "/frames/:id/:index", parameters: [String]()))
    }

    @Test func signedRoutesAnswer403WithoutAValidSignature() async throws {
        let origin = try OriginServer(routes: ["/a.gif": .answer(status: 200, headers: [], body: SourceFetchTests.gif)])
        defer { origin.stop() }
        let service = try TestService { settings in
            settings.sources.allowedNetworks = ["127.0.0.1/32"]
            settings.security.urlKeys = Self.keys
            settings.security.signedRoutes = ["renditions", "sources", "metadata"]
        }
        defer { Task { await service.stop() } }
        let upload = try service.upload(SourceFetchTests.gif)
        let id = try #require(SourceFetchTests.json(upload)["id"] as? String)
        // Unsigned frames without rendition parameters pass; metadata is signed here.
        #expect(try service.client.get("/frames/\(id)/0").status == 200)
        #expect(try service.client.get("/images/\(id)").status == 403)
        #expect(try service.client.get(Self.signer.sign("/images/\(id)")).status == 200)
        #expect(try service.client.get(Self.rotated.sign("/images/\(id)")).status == 200)
        #expect(try service.client.get(Self.signer.sign("/images/\(id)", expires: 1)).status == 403)
        let future = Int(Date().timeIntervalSince1970) + 600
        #expect(try service.client.get(Self.signer.sign("/images/\(id)", expires: future)).status == 200)
        // A signed metadata request lists signed frame URLs carrying its own query.
        let signedMeta = SourceFetchTests.json(
            try service.client.get(Self.signer.sign("/images/\(id)?width=10", expires: future)))
        let frameURLs = try #require(signedMeta["frameUrls"] as? [String])
        #expect(frameURLs.count == signedMeta["frameCount"] as? Int)
        #expect(frameURLs.first?.hasPrefix("/frames/\(id)/0?width=10&exp=\(future)&sig=") == true)
        for url in frameURLs { #expect(Self.signer.verify(url, now: future - 1) == nil, "\(url)") }
        #expect(try service.client.get(frameURLs[1]).status != 403)
        // A rendition parameter needs a signature; with one, the request reaches its handler.
        let rendition = try service.client.get("/frames/\(id)/0?width=10")
        #expect(rendition.status == 403 && rendition.header("Content-Type") == "application/problem+json")
        #expect(try service.client.get(Self.signer.sign("/frames/\(id)/0?width=10")).status != 403)
        let tampered = Self.signer.sign("/frames/\(id)/0?width=10").replacingOccurrences(of: "width=10", with: "width=4000")
        #expect(try service.client.get(tampered).status == 403)
        // A registration by URL: the URL is a signed parameter (the body is not signed).
        let source = (origin.base + "/a.gif").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        #expect(try SourceFetchTests.register(service, origin.base + "/a.gif").status == 403)
        #expect(try service.client.send("POST", "/images?url=\(source)").status == 403)
        let bodyOnly = try service.client.send(
            "POST", Self.signer.sign("/images"), headers: ["Content-Type": "application/json"],
            body: Array("{\"url\":\"\(origin.base)/a.gif\"}".utf8))
        #expect(bodyOnly.status == 403, "the body is not signed: \(bodyOnly.text)")
        let signed = try service.client.send("POST", Self.signer.sign("/images?url=\(source)"))
        #expect(signed.status == 200, "\(signed.text)")
        #expect(origin.connections == 1)
        #expect(try service.client.send("POST", "/images/\(id)/refresh").status == 403)
        #expect(
            try service.client.send("POST", Self.signer.sign("/images/\(id)/refresh")).status == 409,
            "signed: reaches the handler")
    }
}

/// Test shorthand for methods.
enum HTTPMethodName {
    case get, head, post, put
    var value: HTTPMethod {
        switch self {
        case .get: .GET
        case .head: .HEAD
        case .post: .POST
        case .put: .PUT
        }
    }
}
