import Crypto
import FoundationEssentials
import Glibc

/// An access key pair for S3, with the session token of temporary credentials. Its description
/// never shows the secret or the token, so it can appear in logs and error messages safely.
public struct S3Credentials: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    public var accessKeyID: String
    public var secretAccessKey: String
    /// `AWS_SESSION_TOKEN`: sent as `X-Amz-Security-Token` when set.
    public var sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken.flatMap { $0.isEmpty ? nil : $0 }
    }

    public var description: String {
        "S3Credentials(accessKeyID: \(accessKeyID), secretAccessKey: <redacted>"
            + (sessionToken == nil ? ")" : ", sessionToken: <redacted>)")
    }

    public var debugDescription: String { description }

    /// `dump()` and reflection see only the key id.
    public var customMirror: Mirror { Mirror(self, children: ["accessKeyID": accessKeyID]) }
}

/// AWS Signature Version 4 for requests signed in the `Authorization` header (the scheme S3 and
/// every S3-compatible server accept): the canonical request, the string to sign, the signing
/// key derived from the secret by HMAC-SHA256 over date, region, service and `aws4_request`, and
/// the header itself. Pure: the same inputs give the same signature, so it is tested against AWS's
/// published test suite.
public struct SigV4Signer: Sendable {
    /// What a signature was made of, for tests and for debugging a refused request.
    public struct Signed: Sendable, Equatable {
        public var canonicalRequest: String
        public var stringToSign: String
        public var signature: String
        public var authorization: String
        /// Every header to send: the request's own, plus `x-amz-date` (and the content hash and
        /// session token when they are sent).
        public var headers: [(name: String, value: String)]

        public static func == (a: Signed, b: Signed) -> Bool {
            a.canonicalRequest == b.canonicalRequest && a.authorization == b.authorization
                && a.headers.map { "\($0.name):\($0.value)" } == b.headers.map { "\($0.name):\($0.value)" }
        }
    }

    /// The hash of an empty payload, hex.
    public static let emptyPayloadSHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    public var credentials: S3Credentials
    public var region: String
    public var service: String

    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// Signs one request.
    /// - Parameters:
    ///   - path: the path, not percent-encoded (each segment is encoded here, once, as S3 wants).
    ///   - query: the query parameters, not percent-encoded.
    ///   - headers: the headers to sign; `Host` must be among them, as it will be sent.
    ///   - payloadSHA256: hex SHA-256 of the body (or `UNSIGNED-PAYLOAD`).
    ///   - normalizePath: remove `.`/`..` segments and empty segments first (other AWS
    ///     services do; S3 never does, its keys may contain them).
    ///   - sendPayloadHash: add `x-amz-content-sha256` (S3 requires it).
    ///   - signSessionToken: sign `x-amz-security-token` rather than add it afterwards.
    public func sign(
        method: String, path: String, query: [(String, String)] = [], headers: [(String, String)],
        payloadSHA256: String, date: Date, normalizePath: Bool = false, sendPayloadHash: Bool = true,
        signSessionToken: Bool = true
    ) -> Signed {
        let (amzDate, day) = Self.timestamps(date)
        var sent = headers.map { (name: $0.0, value: $0.1) }
        sent.append((name: "X-Amz-Date", value: amzDate))
        if sendPayloadHash { sent.append((name: "x-amz-content-sha256", value: payloadSHA256)) }
        var signedInput = sent
        if let token = credentials.sessionToken {
            sent.append((name: "X-Amz-Security-Token", value: token))
            if signSessionToken { signedInput = sent }
        }
        let (canonicalHeaders, signedHeaders) = Self.canonicalHeaders(signedInput)
        let canonicalRequest = [
            method.uppercased(),
            Self.canonicalURI(path, normalize: normalizePath),
            Self.canonicalQuery(query),
            canonicalHeaders,
            signedHeaders,
            payloadSHA256,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, Self.sha256Hex(Array(canonicalRequest.utf8))]
            .joined(separator: "\n")
        let key = signingKey(day: day)
        let signature = ContentHash.hex(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key))
        let authorization =
            "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), "
            + "SignedHeaders=\(signedHeaders), Signature=\(signature)"
        return Signed(
            canonicalRequest: canonicalRequest, stringToSign: stringToSign, signature: signature,
            authorization: authorization, headers: sent)
    }

    /// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request").
    func signingKey(day: String) -> SymmetricKey {
        var key = SymmetricKey(data: Array(("AWS4" + credentials.secretAccessKey).utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return key
    }

    // MARK: Canonical forms

    /// `20150830T123600Z` and `20150830`, in UTC.
    static func timestamps(_ date: Date) -> (String, String) {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let day = "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))"
        return (day + "T" + two(parts.tm_hour) + two(parts.tm_min) + two(parts.tm_sec) + "Z", day)
    }

    /// RFC 3986 percent-encoding of everything but the unreserved characters, upper-case hex.
    /// `keepSlash` leaves `/` as it is (paths).
    static func uriEncode(_ text: String, keepSlash: Bool = false) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case 0x41...0x5a, 0x61...0x7a, 0x30...0x39, 0x2d, 0x2e, 0x5f, 0x7e:
                out.append(byte)
            case 0x2f where keepSlash:
                out.append(byte)
            default:
                out += [0x25, hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func canonicalURI(_ path: String, normalize: Bool) -> String {
        var path = path.isEmpty ? "/" : path
        if normalize {
            var segments: [Substring] = []
            for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
                if segment == "." { continue }
                if segment == ".." { _ = segments.popLast(); continue }
                segments.append(segment)
            }
            let trailing = path.hasSuffix("/") && !segments.isEmpty
            path = "/" + segments.joined(separator: "/") + (trailing ? "/" : "")
        }
        return uriEncode(path, keepSlash: true)
    }

    static func canonicalQuery(_ query: [(String, String)]) -> String {
        let encoded: [(key: String, value: String)] = query.map { (uriEncode($0.0), uriEncode($0.1)) }
        let sorted = encoded.sorted { a, b in a.key == b.key ? a.value < b.value : a.key < b.key }
        return sorted.map { $0.key + "=" + $0.value }.joined(separator: "&")
    }

    /// Names lower-cased and sorted; values trimmed with inner runs of spaces made one; a name
    /// given more than once gets its values joined by commas, in order.
    static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> (String, String) {
        var values: [String: [String]] = [:]
        for header in headers {
            let value = header.value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
            values[header.name.lowercased(), default: []].append(value)
        }
        let names = values.keys.sorted()
        let canonical = names.map { "\($0):\(values[$0]!.joined(separator: ","))\n" }.joined()
        return (canonical, names.joined(separator: ";"))
    }

    static func sha256Hex(_ bytes: [UInt8]) -> String {
        ContentHash.hex(SHA256.hash(data: bytes))
    }
}
