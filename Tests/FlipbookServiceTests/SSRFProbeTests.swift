import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import SourceRules
import Testing

@testable import FlipbookService
@testable import OutboundHTTP

/// Server-side request forgery probes against a service whose `sources.allowedNetworks` is empty
/// (the default): every probe is refused with 422 naming the rule, and the origin servers on
/// loopback see no connection at all.
@Suite(.serialized, .ownThreads)
struct SSRFProbeTests {
    /// Hosts that are 127.0.0.1 (or another refused address) however they are written.
    static func probes(port: Int) -> [String] {
        let hosts = [
            "127.0.0.1", "127.1", "127.0.1", "2130706433", "0x7f000001", "0x7f.1", "0177.0.0.1", "017700000001",
            "0x7f.0x0.0x0.0x1", "127.0.0.1.", "0", "0.0.0.0", "0x0", "[::1]", "[::]", "[0:0:0:0:0:0:0:1]",
            "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::ffff:0:127.0.0.1]", "[64:ff9b::127.0.0.1]", "[64:ff9b::7f00:1]",
            "[2002:7f00:1::]", "[::127.0.0.1]", "localhost", "LOCALHOST", "localhost.", "loop.test", "rebind.test",
            "mapped.test", "10.0.0.1", "192.168.0.1", "172.16.0.1", "169.254.169.254", "2852039166", "0xa9fea9fe",
            "100.64.0.1", "[fd00::1]", "[fe80::1]", "224.0.0.1", "255.255.255.255", "[2001:0:4136:e378:8000:63bf:3fff:fdd2]",
        ]
        return hosts.map { "http://\($0):\(port)/a.gif" } + [
            "https://127.0.0.1:\(port)/a.gif", "http://user:pass@example.com:\(port)/a.gif",
            "http://example.com@127.0.0.1:\(port)/a.gif", "file:///etc/passwd", "gopher://127.0.0.1:\(port)/",
            "http://127.0.0.1:\(port)\\@example.com/", "http://0x7f.0x100000000:\(port)/",
        ]
    }

    /// Names as `/etc/hosts` would give them: loopback, private and loopback addresses of both
    /// families, IPv4-mapped loopback. (No public address: nothing here may leave the machine.)
    static let resolver = StaticResolver([
        "loop.test": [.v4(0x7f00_0001)],
        "rebind.test": [.v4(0x0a00_0001), .v4(0x7f00_0001), IPAddress("::1")!],
        "mapped.test": [IPAddress("::ffff:127.0.0.1")!],
        "localhost": [.v4(0x7f00_0001), IPAddress("::1")!],
        "allowed.test": [.v4(0x7f00_0001)],
        "allowed.test.evil.net": [.v4(0x7f00_0001)],
    ])

    @Test func everyProbeIsRefusedAndNoneConnects() async throws {
        let origin = try OriginServer(routes: ["/a.gif": .answer(status: 200, headers: [], body: SourceFetchTests.gif)])
        defer { origin.stop() }
        let service = try TestService(sourceResolver: Self.resolver)
        defer { Task { await service.stop() } }
        for url in Self.probes(port: origin.port) {
            let answer = try SourceFetchTests.register(service, url)
            #expect(answer.status == 422, "\(url): \(answer.status) \(answer.text)")
            #expect(answer.header("Content-Type") == "application/problem+json")
        }
        #expect(origin.connections == 0)
        #expect(try service.metric("flipbook_source_fetches_total") == Double(Self.probes(port: 1).count))
    }

    @Test func theSystemResolverIsCheckedToo() async throws {
        // localhost through /etc/hosts, with nothing injected.
        let origin = try OriginServer(routes: ["/a.gif": .answer(status: 200, headers: [], body: SourceFetchTests.gif)])
        defer { origin.stop() }
        let service = try TestService()
        defer { Task { await service.stop() } }
        let answer = try SourceFetchTests.register(service, "http://localhost:\(origin.port)/a.gif")
        #expect(answer.status == 422 && answer.text.contains("address-loopback"), "\(answer.text)")
        #expect(origin.connections == 0)
    }

    @Test func allowListBypassesBySuffixAndUserinfoFail() async throws {
        let origin = try OriginServer(routes: ["/a.gif": .answer(status: 200, headers: [], body: SourceFetchTests.gif)])
        defer { origin.stop() }
        let service = try TestService(sourceResolver: Self.resolver) { settings in
            settings.sources.allowedPrefixes = ["http://allowed.test:\(origin.port)"]
            settings.sources.allowedNetworks = ["127.0.0.0/8"]
        }
        defer { Task { await service.stop() } }
        for url in [
            "http://allowed.test.evil.net:\(origin.port)/a.gif",
            "http://allowed.test:\(origin.port)@allowed.test.evil.net:\(origin.port)/a.gif",
            "http://allowed.test:\(origin.port + 1)/a.gif", "https://allowed.test:\(origin.port)/a.gif",
            "http://127.0.0.1:\(origin.port)/a.gif", "http://evil.net/http://allowed.test:\(origin.port)/a.gif",
        ] {
            let answer = try SourceFetchTests.register(service, url)
            #expect(answer.status == 422, "\(url): \(answer.text)")
        }
        #expect(origin.connections == 0)
        // The allowed prefix itself works (its network is allowed).
        #expect(try SourceFetchTests.register(service, "http://allowed.test:\(origin.port)/a.gif").status == 201)
        #expect(origin.connections == 1)
    }

    @Test func onlyTheAddressesThatPassAreConnectedTo() async throws {
        // `localhost` as /etc/hosts has it (::1 and 127.0.0.1) with only 127.0.0.1 allowed.
        let origin = try OriginServer(routes: ["/a.gif": .answer(status: 200, headers: [], body: SourceFetchTests.gif)])
        defer { origin.stop() }
        let resolver = StaticResolver(["both.test": [IPAddress("::1")!, .v4(0x7f00_0001)]])
        let service = try TestService(sourceResolver: resolver) { $0.sources.allowedNetworks = ["127.0.0.1/32"] }
        defer { Task { await service.stop() } }
        #expect(try SourceFetchTests.register(service, "http://both.test:\(origin.port)/a.gif").status == 201)
        #expect(origin.connections == 1)
    }
}
