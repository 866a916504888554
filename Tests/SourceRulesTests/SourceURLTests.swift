import Testing

@testable import SourceRules

/// How source URLs are read, and the allowed-prefix matcher.
struct SourceURLTests {
    @Test func wellFormedURLs() throws {
        let url = try SourceURL("HTTPS://Example.COM./a/b.gif?x=1#frag")
        #expect(url.scheme == "https" && url.host == .name("example.com") && url.port == 443)
        #expect(url.pathAndQuery == "/a/b.gif?x=1")
        #expect(url.canonical == "https://example.com/a/b.gif?x=1")
        #expect(try SourceURL("http://example.com").canonical == "http://example.com/")
        #expect(try SourceURL("http://example.com?q").canonical == "http://example.com/?q")
        #expect(try SourceURL("http://example.com:8080/x").port == 8080)
        #expect(try SourceURL("http://example.com:80/x").canonical == "http://example.com/x")
        #expect(try SourceURL("http://0x7f.1:9/x").canonical == "http://127.0.0.1:9/x")
        #expect(try SourceURL("http://[::ffff:127.0.0.1]/").canonical == "http://[::ffff:7f00:1]/")
    }

    static let refused: [(String, SourceURL.Refusal)] = [
        ("ftp://example.com/a.gif", .scheme), ("file:///etc/passwd", .scheme), ("gopher://x/", .scheme),
        ("javascript://x/", .scheme), ("dict://127.0.0.1:11211/", .scheme),
        ("https://user:pass@example.com/", .credentials), ("https://example.com@evil.net/", .credentials),
        ("https://@evil.net/", .credentials), ("https://a%40b@evil.net/", .credentials),
        ("https://example.com:99999/", .malformed), ("https://example.com:/", .malformed),
        ("https://example.com:0/", .malformed), ("https://exa mple.com/", .malformed),
        ("https://example.com\\@evil.net/", .malformed), ("https://example.com/\u{7f}", .malformed),
        ("https://ex\u{e4}mple.com/", .malformed), ("https:/example.com/", .malformed), ("example.com/a.gif", .malformed),
        ("", .malformed), ("https://", .host), ("https:///a", .host), ("https://exa%6dple.com/", .host),
        ("https://-example.com/", .host), ("https://example..com/", .host),
        ("https://[::1/", .host), ("https://[::1]x/", .host),
    ]

    @Test(arguments: refused)
    func refusedURLs(_ text: String, _ refusal: SourceURL.Refusal) {
        #expect(throws: refusal, "\(text)") { try SourceURL(text) }
    }

    @Test func prefixesMatchByPartsNotByText() throws {
        let policy = SourcePolicy.parse(prefixes: ["https://example.com", "https://cdn.example.org/gifs"], networks: []).0
        for allowed in [
            "https://example.com/", "https://example.com/a.gif", "https://EXAMPLE.com/a.gif?x", "https://example.com:443/x",
            "https://cdn.example.org/gifs", "https://cdn.example.org/gifs/a.gif", "https://cdn.example.org/gifs?x=1",
        ] {
            #expect((try? policy.check(allowed)) != nil, "\(allowed) should be allowed")
        }
        let refused: [(String, SourcePolicy.Refusal)] = [
            ("https://example.com.evil.net/a.gif", .prefix), ("https://example.com@evil.net/", .url(.credentials)),
            ("https://evil.net/https://example.com/", .prefix), ("http://example.com/a.gif", .prefix),
            ("https://example.com:8443/a.gif", .prefix), ("https://evilexample.com/", .prefix),
            ("https://sub.example.com/", .prefix), ("https://cdn.example.org/gifsx/a.gif", .prefix),
            ("https://cdn.example.org/gif", .prefix), ("https://cdn.example.org/", .prefix),
            ("https://evil.net/?https://example.com", .prefix), ("https://example.com%2eevil.net/", .url(.host)),
        ]
        for (text, refusal) in refused {
            #expect(throws: refusal, "\(text)") { try policy.check(text) }
        }
    }

    @Test func noPrefixesMeansAnyHost() throws {
        _ = try SourcePolicy().check("https://anything.example/a.gif")
    }

    @Test func malformedSettingsAreReported() {
        let (_, invalid) = SourcePolicy.parse(
            prefixes: ["https://ok.example", "ftp://x", "https://a@b", "https://x/?q"],
            networks: ["10.0.0.0/8", "10.0.0.1/8", "nope"])
        #expect(invalid == ["ftp://x", "https://a@b", "https://x/?q", "10.0.0.1/8", "nope"])
    }

    @Test func redirectsResolveAgainstTheURL() throws {
        let base = try SourceURL("https://example.com:8443/dir/a.gif?x=1")
        #expect(try base.resolving("/b.gif").canonical == "https://example.com:8443/b.gif")
        #expect(try base.resolving("b.gif").canonical == "https://example.com:8443/dir/b.gif")
        #expect(try base.resolving("?y=2").canonical == "https://example.com:8443/dir/a.gif?y=2")
        #expect(try base.resolving("//other.example/c.gif").canonical == "https://other.example/c.gif")
        #expect(try base.resolving("http://127.1/").canonical == "http://127.0.0.1/")
        #expect(throws: SourceURL.Refusal.scheme) { try base.resolving("file:///etc/passwd") }
        #expect(throws: SourceURL.Refusal.credentials) { try base.resolving("https://u@evil.net/") }
    }
}
