import Crypto
import Foundation
import Testing

@testable import URLSigning

/// Signed URLs: what verifies, and a table of tampered requests that must not.
struct URLSignatureTests {
    static let key = URLSigningKey("736563726574:68656c6c6f")!  // "secret":"hello"
    static let other = URLSigningKey("6f74686572:73616c74")!  // "other":"salt"
    static let now = 1_800_000_000

    /// The signature by the documented formula, computed independently of URLSignature.
    static func reference(_ key: URLSigningKey, _ text: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: key.salt + Array(text.utf8), using: SymmetricKey(data: key.key))
        return Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    @Test func signingFollowsTheDocumentedFormula() {
        let signer = URLSignature(keys: [Self.key])
        #expect(
            signer.sign("/frames/abc/3?width=320&fit=cover") == "/frames/abc/3?width=320&fit=cover&sig="
                + Self.reference(Self.key, "/frames/abc/3?width=320&fit=cover"))
        #expect(signer.sign("/images/abc") == "/images/abc?sig=" + Self.reference(Self.key, "/images/abc?"))
        #expect(
            signer.sign("/frames/a/1?width=1", expires: 5) == "/frames/a/1?width=1&exp=5&sig="
                + Self.reference(Self.key, "/frames/a/1?width=1&exp=5"))
    }

    @Test func validURLsVerify() {
        let verifier = URLSignature(keys: [Self.other, Self.key])
        for target in [
            URLSignature(keys: [Self.key]).sign("/frames/abc/3?width=320&height=200"),
            URLSignature(keys: [Self.other]).sign("/frames/abc/3?width=320"),
            URLSignature(keys: [Self.key]).sign("/images/abc"),
            URLSignature(keys: [Self.key]).sign("/frames/abc?t=1500&width=64", expires: Self.now + 60),
            URLSignature(keys: [Self.key]).sign("/frames/abc/3?width=320", expires: Self.now),
        ] {
            #expect(verifier.verify(target, now: Self.now) == nil, "\(target)")
        }
        // The signature may stand anywhere among the parameters; it is found by name.
        let sig = Self.reference(Self.key, "/frames/a/1?width=1&height=2")
        #expect(verifier.verify("/frames/a/1?sig=\(sig)&width=1&height=2", now: Self.now) == nil)
        #expect(verifier.verify("/frames/a/1?width=1&%73ig=\(sig)&height=2", now: Self.now) == nil)
    }

    static let signed = URLSignature(keys: [key]).sign("/frames/abc/3?width=320&height=200", expires: now + 60)

    /// Each is a tampered or unsigned request, with the failure it gets.
    static let tampered: [(String, URLSignature.Failure)] = {
        let valid = signed
        let sig = String(valid[valid.range(of: "sig=")!.upperBound...])
        func swap(_ a: String, _ b: String) -> String { valid.replacingOccurrences(of: a, with: b) }
        var flipped = Array(sig)
        flipped[10] = flipped[10] == "A" ? "B" : "A"
        return [
            (swap("/frames/abc/3", "/frames/abc/4"), .mismatch),
            (swap("/frames/abc/3", "/frames/abd/3"), .mismatch),
            (swap("/frames/abc/3", "/Frames/abc/3"), .mismatch),
            (swap("/frames/abc/3", "/frames/abc/3/"), .mismatch),
            (swap("/frames/abc/3", "/frames/%61bc/3"), .mismatch),
            (swap("width=320", "width=321"), .mismatch),
            (swap("width=320", "width=3200"), .mismatch),
            (swap("width=320&height=200", "height=200&width=320"), .mismatch),
            (swap("&height=200", ""), .mismatch),
            (swap("width=320", "width=320&width=640"), .mismatch),
            (swap("width=320", "width=320&fit=cover"), .mismatch),
            (swap("width=320", "width=320&"), .mismatch),
            (swap("width=320", "WIDTH=320"), .mismatch),
            (swap("exp=\(now + 60)", "exp=\(now + 6000)"), .mismatch),
            (swap("&exp=\(now + 60)", ""), .mismatch),
            (swap(sig, String(flipped)), .mismatch),
            (swap(sig, String(sig.dropLast())), .malformed("sig is not 43 characters of URL-safe base64")),
            (swap(sig, sig + "A"), .malformed("sig is not 43 characters of URL-safe base64")),
            (
                swap(sig, sig.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "="),
                .malformed("sig is not 43 characters of URL-safe base64")
            ),
            (swap("sig=" + sig, "sig=" + sig + "&sig=" + sig), .malformed("more than one sig")),
            (swap("sig=", "signature="), .missing),
            (swap("&sig=" + sig, ""), .missing),
            ("/frames/abc/3", .missing),
            (URLSignature(keys: [other]).sign("/frames/abc/3?width=320"), .mismatch),
            (URLSignature(keys: [key]).sign("/frames/abc/3?width=320", expires: now - 1), .expired),
            (URLSignature(keys: [key]).sign("/frames/abc/3?width=320&exp=soon"), .malformed("exp is not a number of seconds")),
            (URLSignature(keys: [key]).sign("/frames/abc/3?exp=1&width=320", expires: now + 9), .malformed("more than one exp")),
            // A signature made for the path alone does not sign a query added to it.
            (URLSignature(keys: [key]).sign("/frames/abc/3") + "&width=4000", .mismatch),
            // Search-and-replace of the value elsewhere in the target cannot help: the value is
            // taken from the parameter named sig only.
            ("/frames/abc/3?note=sig=\(sig)&width=320&height=200&exp=\(now + 60)", .missing),
        ]
    }()

    @Test(arguments: tampered)
    func tamperedURLsAreRefused(_ target: String, _ failure: URLSignature.Failure) {
        let verifier = URLSignature(keys: [Self.key])
        #expect(verifier.verify(target, now: Self.now) == failure, "\(target)")
    }

    @Test func rotationAcceptsAnyKeyAndRetiredKeysStopWorking() {
        let old = URLSignature(keys: [Self.other]).sign("/frames/a/1?width=10")
        #expect(URLSignature(keys: [Self.key, Self.other]).verify(old, now: Self.now) == nil)
        #expect(URLSignature(keys: [Self.key]).verify(old, now: Self.now) == .mismatch)
    }

    @Test func keysParse() {
        #expect(URLSigningKey("00ff:") == URLSigningKey(key: [0, 255], salt: []))
        for bad in ["", ":00", "abc:00", "00", "zz:00", "00:0", "00:00:00"] {
            #expect(URLSigningKey(bad) == nil, "\(bad)")
        }
    }

    @Test func base64URLRoundTrips() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let text = URLSignature.base64URL(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            let decoded = Array(text.utf8).withUnsafeBytes { URLSignature.decodeBase64URL($0) }
            #expect(decoded == bytes)
        }
    }
}
