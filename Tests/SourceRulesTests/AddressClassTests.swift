import Testing

@testable import SourceRules

/// The address table: every class the fetcher refuses, in every form an address may be written.
struct AddressClassTests {
    static let table: [(String, AddressClass)] = [
        ("127.0.0.1", .loopback), ("127.255.255.254", .loopback), ("::1", .loopback),
        ("0.0.0.0", .unspecified), ("0.1.2.3", .unspecified), ("::", .unspecified),
        ("10.0.0.1", .private), ("172.16.0.1", .private), ("172.31.255.255", .private),
        ("192.168.1.1", .private), ("fc00::1", .private), ("fd12:3456::1", .private), ("fec0::1", .private),
        ("169.254.169.254", .linkLocal), ("169.254.0.1", .linkLocal), ("fe80::1", .linkLocal),
        ("100.64.0.1", .cgnat), ("100.127.255.254", .cgnat),
        ("224.0.0.1", .multicast), ("239.255.255.250", .multicast), ("ff02::1", .multicast),
        ("255.255.255.255", .broadcast),
        ("240.0.0.1", .reserved), ("192.0.2.1", .reserved), ("198.51.100.7", .reserved),
        ("203.0.113.9", .reserved), ("198.18.0.1", .reserved), ("192.0.0.8", .reserved),
        ("2001:db8::1", .reserved), ("100::1", .reserved), ("::2", .ipv4InIPv6),
        ("::ffff:127.0.0.1", .ipv4InIPv6), ("::ffff:7f00:1", .ipv4InIPv6), ("::ffff:169.254.169.254", .ipv4InIPv6),
        ("::ffff:8.8.8.8", .ipv4InIPv6), ("::127.0.0.1", .ipv4InIPv6), ("64:ff9b::7f00:1", .ipv4InIPv6),
        ("64:ff9b::a9fe:a9fe", .ipv4InIPv6), ("64:ff9b:1::1", .ipv4InIPv6), ("2002:7f00:1::1", .ipv4InIPv6),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", .ipv4InIPv6),
        ("8.8.8.8", .public), ("1.1.1.1", .public), ("100.63.255.255", .public), ("100.128.0.0", .public),
        ("172.15.255.255", .public), ("172.32.0.0", .public), ("169.253.255.255", .public),
        ("2606:4700:4700::1111", .public), ("2a00:1450:4001:80b::200e", .public),
    ]

    @Test(arguments: table)
    func classOf(_ text: String, _ expected: AddressClass) throws {
        let address = try #require(IPAddress(text), "\(text) does not parse")
        #expect(AddressClass(address) == expected, "\(text)")
    }

    /// Each URL host below is 127.0.0.1 (or 169.254.169.254, or 0.0.0.0) written another way: all
    /// must parse to that address, so that the address rules see it.
    static let numericHosts: [(String, String)] = [
        ("2130706433", "127.0.0.1"), ("0x7f000001", "127.0.0.1"), ("017700000001", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"), ("127.1", "127.0.0.1"), ("127.0.1", "127.0.0.1"), ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.0x0.0x0.0x1", "127.0.0.1"), ("0x7F.1", "127.0.0.1"), ("127.0.0.1.", "127.0.0.1"),
        ("0", "0.0.0.0"), ("0.0", "0.0.0.0"), ("0x0", "0.0.0.0"), ("00", "0.0.0.0"),
        ("2852039166", "169.254.169.254"), ("0xa9fea9fe", "169.254.169.254"), ("0251.0376.0251.0376", "169.254.169.254"),
        ("169.254.43518", "169.254.169.254"), ("0xa9.0xfe.0xa9fe", "169.254.169.254"),
        ("1681915905", "100.64.0.1"), ("10.1", "10.0.0.1"), ("192.168.257", "192.168.1.1"),
    ]

    @Test(arguments: numericHosts)
    func numericFormsAreTheirAddresses(_ host: String, _ address: String) throws {
        let url = try SourceURL("http://\(host)/a.gif")
        #expect(url.host == .address(try #require(IPAddress(address))), "\(host)")
    }

    @Test(arguments: [
        "256.1.1.1", "1.2.3.4.5", "0x100000000", "4294967296", "1.2.0x1000000", "08.1.1.1", "1..1", "0x7f.0x100000000",
    ])
    func malformedNumericHostsAreRefusedNotResolved(_ host: String) {
        #expect(throws: SourceURL.Refusal.host) { try SourceURL("http://\(host)/") }
    }

    @Test(arguments: [
        ("[::1]", "::1"), ("[::ffff:127.0.0.1]", "::ffff:7f00:1"), ("[0:0:0:0:0:0:0:1]", "::1"),
        ("[::ffff:7f00:1]", "::ffff:7f00:1"), ("[64:ff9b::127.0.0.1]", "64:ff9b::7f00:1"), ("[fe80::1]", "fe80::1"),
        ("[2001:db8:0:0:1:0:0:1]", "2001:db8::1:0:0:1"),
    ])
    func ipv6Hosts(_ host: String, _ canonical: String) throws {
        let url = try SourceURL("http://\(host):8080/")
        guard case .address(let address) = url.host else {
            Issue.record("\(host) is not an address")
            return
        }
        #expect(address.description == canonical)
    }

    @Test(arguments: ["[::1", "[fe80::1%25eth0]", "[1:2:3:4:5:6:7:8:9]", "[1::2::3]", "[:1]", "[12345::]", "[::g]"])
    func malformedIPv6HostsAreRefused(_ host: String) {
        #expect(throws: SourceURL.Refusal.self) { try SourceURL("http://\(host)/") }
    }

    @Test func cidrBlocks() throws {
        let loopback = try #require(NetworkBlock("127.0.0.0/8"))
        #expect(loopback.contains(IPAddress("127.9.9.9")!))
        #expect(!loopback.contains(IPAddress("128.0.0.1")!))
        #expect(!loopback.contains(IPAddress("::ffff:127.0.0.1")!), "an IPv4 block holds no IPv6 address")
        let one = try #require(NetworkBlock("127.0.0.1"))
        #expect(one.prefixLength == 32 && one.contains(IPAddress("127.0.0.1")!) && !one.contains(IPAddress("127.0.0.2")!))
        let v6 = try #require(NetworkBlock("fd00::/8"))
        #expect(v6.contains(IPAddress("fd12::1")!) && !v6.contains(IPAddress("fc00::1")!))
        #expect(try #require(NetworkBlock("::/0")).contains(IPAddress("2001:db8::1")!))
        #expect(try #require(NetworkBlock("0.0.0.0/0")).contains(IPAddress("8.8.8.8")!))
        #expect(try #require(NetworkBlock("::1/128")).contains(IPAddress("::1")!))
        for bad in ["127.0.0.1/33", "127.0.0.1/8", "10.0.0.0/", "10.0.0.0/-1", "::1/129", "127.1/32", "x/8", "10.0.0.0/08a"] {
            #expect(NetworkBlock(bad) == nil, "\(bad)")
        }
    }

    @Test func allowedNetworksLetOnlyTheirAddressesThrough() throws {
        let policy = SourcePolicy(allowedNetworks: [NetworkBlock("127.0.0.0/8")!, NetworkBlock("::1")!])
        try policy.check(IPAddress("127.0.0.1")!)
        try policy.check(IPAddress("::1")!)
        try policy.check(IPAddress("8.8.8.8")!)
        #expect(throws: SourcePolicy.Refusal.address(.private)) { try policy.check(IPAddress("10.0.0.1")!) }
        #expect(throws: SourcePolicy.Refusal.address(.ipv4InIPv6)) { try policy.check(IPAddress("::ffff:127.0.0.1")!) }
        #expect(throws: SourcePolicy.Refusal.address(.linkLocal)) { try policy.check(IPAddress("169.254.169.254")!) }
        let none = SourcePolicy()
        #expect(throws: SourcePolicy.Refusal.address(.loopback)) { try none.check(IPAddress("127.0.0.1")!) }
        #expect(throws: SourcePolicy.Refusal.address(.unspecified)) { try none.check("http://0.0.0.0:8080/") }
        #expect(throws: SourcePolicy.Refusal.address(.loopback)) { try none.check("http://2130706433/") }
        #expect(throws: SourcePolicy.Refusal.address(.cgnat)) { try none.check("http://100.64.0.1/") }
    }

    @Test func addressTextRoundTrips() throws {
        for text in ["1.2.3.4", "::", "::1", "2001:db8::1", "fe80::1:2", "1:2:3:4:5:6:7:8", "1::8", "::ffff:7f00:1"] {
            #expect(IPAddress(text)?.description == text, "\(text)")
        }
    }
}
