import FlipbookTestSupport
import Foundation
import Testing
import URLSigning

/// `flipbook sign` as an operator runs it: the URL it prints verifies with the same key.
@Suite("flipbook sign", .ownThreads)
struct SignCommandTests {
    static let key = "736563726574:68656c6c6f"

    @Test func printsAURLThatVerifies() throws {
        let flipbook = try flipbookExecutable()
        let signed = try runProcess(
            flipbook,
            ["sign", "http://localhost:8080/frames/abc/3?width=320", "--expires", "600", "--set", "security.urlKeys=\(Self.key)"])
        #expect(signed.status == 0, "\(signed.stderr)")
        let url = String(decoding: signed.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(url.hasPrefix("http://localhost:8080/frames/abc/3?width=320&exp="))
        let target = String(url.dropFirst("http://localhost:8080".count))
        let verifier = URLSignature(keys: [URLSigningKey(Self.key)!])
        #expect(verifier.verify(target, now: Int(Date().timeIntervalSince1970)) == nil)
        #expect(verifier.verify(target, now: Int(Date().timeIntervalSince1970) + 700) == .expired)
        let noKey = try runProcess(flipbook, ["sign", "/images/abc", "--set", "security.urlKeys="])
        #expect(noKey.status != 0 && noKey.stderr.contains("security.urlKeys"))
    }
}
