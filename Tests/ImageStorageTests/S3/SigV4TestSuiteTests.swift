import Foundation
import Testing

@testable import ImageStorage

/// The signer against AWS's published Signature Version 4 test suite
/// (`Tests/Fixtures/sigv4-test-suite.json`): for every case, the canonical request, the string to
/// sign, the signature and the `Authorization` header must be exactly AWS's.
@Suite struct SigV4TestSuiteTests {
    struct Case: Decodable, CustomTestStringConvertible, Sendable {
        var name, method, path, query, body: String
        var headers: [[String]]
        var accessKeyID, secretAccessKey: String
        var sessionToken: String?
        var signSessionToken, normalizePath, signBody: Bool
        var region, service, timestamp: String
        var canonicalRequest, stringToSign, signature, authorization: String
        var testDescription: String { name }
    }

    struct Suite: Decodable {
        var cases: [Case]
    }

    static let cases: [Case] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/sigv4-test-suite.json")
        guard let data = try? Data(contentsOf: url), let suite = try? JSONDecoder().decode(Suite.self, from: data) else {
            return []
        }
        return suite.cases
    }()

    @Test func theSuiteIsThere() {
        #expect(Self.cases.count == 38)
    }

    @Test(arguments: cases) func signsLikeAWS(_ c: Case) throws {
        let signer = SigV4Signer(
            credentials: S3Credentials(
                accessKeyID: c.accessKeyID, secretAccessKey: c.secretAccessKey,
                sessionToken: c.sessionToken),
            region: c.region, service: c.service)
        let query: [(String, String)] =
            c.query.isEmpty
            ? []
            : c.query.split(separator: "&").map { item in
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return (
                    String(pair[0]).removingPercentEncoding ?? "",
                    pair.count > 1 ? String(pair[1]).removingPercentEncoding ?? "" : ""
                )
            }
        let date = try #require(ISO8601DateFormatter().date(from: c.timestamp))
        let signed = signer.sign(
            method: c.method, path: c.path.removingPercentEncoding ?? c.path, query: query,
            headers: c.headers.map { ($0[0], $0[1]) },
            payloadSHA256: SigV4Signer.sha256Hex(Array(c.body.utf8)), date: date,
            normalizePath: c.normalizePath, sendPayloadHash: c.signBody,
            signSessionToken: c.signSessionToken)
        #expect(signed.canonicalRequest == c.canonicalRequest)
        #expect(signed.stringToSign == c.stringToSign)
        #expect(signed.signature == c.signature)
        #expect(signed.authorization == c.authorization)
        if let token = c.sessionToken {
            #expect(signed.headers.contains { $0.name == "X-Amz-Security-Token" && $0.value == token })
        }
    }

    @Test func credentialsNeverShowTheirSecrets() {
        let credentials = S3Credentials(
            accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            sessionToken: "token-123")
        var dumped = ""
        dump(credentials, to: &dumped)
        let text = "\(credentials) \(String(reflecting: credentials)) \(dumped)"
        #expect(text.contains("AKIDEXAMPLE"))
        #expect(!text.contains("wJalrXUtnFEMI") && !text.contains("token-123"))
    }
}
