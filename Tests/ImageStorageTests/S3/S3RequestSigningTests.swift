import Foundation
import Prometheus
import Testing

@testable import ImageStorage

/// The requests Flipbook itself makes, signed: their URL, canonical request, string to sign and
/// signature must equal what botocore (boto3's signer, 1.43) computes for the same request —
/// path-style and virtual-hosted addressing, a non-default port, query parameters that need
/// encoding, a session token, `Content-MD5` and a conditional GET.
@Suite struct S3RequestSigningTests {
    static let sha = "5b5650cd1a4b2ff1c969959d565bf5504689a99de2e004797ed39dda57f34f59"
    static let date = Date(timeIntervalSince1970: 1_795_435_200)  // 2026-11-23T12:00:00Z

    static func client(_ endpoint: String, region: String, pathStyle: Bool, token: String? = nil) -> S3Client {
        S3Client(
            configuration: S3Client.Configuration(
                endpoint: S3Endpoint(endpoint)!, region: region, bucket: "flipbook-media", pathStyle: pathStyle,
                credentials: S3Credentials(
                    accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                    sessionToken: token),
                requestTimeoutSeconds: 5, retries: 0),
            metricsFactory: PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
    }

    func expect(
        _ prepared: S3Client.Prepared, url: String, canonicalRequest: String, stringToSign: String,
        signature: String
    ) {
        #expect(prepared.url.absoluteString == url)
        #expect(prepared.signed.canonicalRequest == canonicalRequest)
        #expect(prepared.signed.stringToSign == stringToSign)
        #expect(prepared.signed.signature == signature)
        #expect(prepared.headers.contains { $0.name == "Authorization" && $0.value.hasSuffix("Signature=" + signature) })
    }

    @Test func aPathStylePutOfAnOriginal() {
        let prepared = Self.client("http://127.0.0.1:9000", region: "eu-west-1", pathStyle: true)
            .prepare(
                method: "PUT", key: "prod/originals/" + Self.sha,
                headers: [("Content-MD5", "1B2M2Y8AsgTpgAmY7PhCfg=="), ("Content-Type", "application/octet-stream")],
                payloadSHA256: Self.sha, date: Self.date)
        expect(
            prepared, url: "http://127.0.0.1:9000/flipbook-media/prod/originals/" + Self.sha,
            canonicalRequest:
                "PUT\n/flipbook-media/prod/originals/5b5650cd1a4b2ff1c969959d565bf5504689a99de2e004797ed39dda57f34f59\n\ncontent-md5:1B2M2Y8AsgTpgAmY7PhCfg==\ncontent-type:application/octet-stream\nhost:127.0.0.1:9000\nx-amz-content-sha256:5b5650cd1a4b2ff1c969959d565bf5504689a99de2e004797ed39dda57f34f59\nx-amz-date:20261123T120000Z\n\ncontent-md5;content-type;host;x-amz-content-sha256;x-amz-date\n5b5650cd1a4b2ff1c969959d565bf5504689a99de2e004797ed39dda57f34f59",
            stringToSign:
                "AWS4-HMAC-SHA256\n20261123T120000Z\n20261123/eu-west-1/s3/aws4_request\n17c50bcf7353f7af7249312192d1e8d28dfdb70edecde0b7c68687b0fb77765b",
            signature: "3a5664d5fbdf032d6e2436071a85adc7d8f050c2dd676fae2a62e193b3a25754")
    }

    @Test func aVirtualHostedListingWithASessionToken() {
        let prepared = Self.client(
            "https://s3.eu-west-1.amazonaws.com", region: "eu-west-1", pathStyle: false,
            token: "FwoGZXIvYXdzEXAMPLE+/token=="
        )
        .prepare(
            method: "GET", key: nil,
            query: [
                ("list-type", "2"), ("prefix", "prod/meta/"), ("start-after", "prod/meta/clip.gif.json"),
                ("max-keys", "101"),
            ],
            payloadSHA256: SigV4Signer.emptyPayloadSHA256, date: Self.date)
        expect(
            prepared,
            url:
                "https://flipbook-media.s3.eu-west-1.amazonaws.com/?list-type=2&max-keys=101&prefix=prod%2Fmeta%2F&start-after=prod%2Fmeta%2Fclip.gif.json",
            canonicalRequest:
                "GET\n/\nlist-type=2&max-keys=101&prefix=prod%2Fmeta%2F&start-after=prod%2Fmeta%2Fclip.gif.json\nhost:flipbook-media.s3.eu-west-1.amazonaws.com\nx-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\nx-amz-date:20261123T120000Z\nx-amz-security-token:FwoGZXIvYXdzEXAMPLE+/token==\n\nhost;x-amz-content-sha256;x-amz-date;x-amz-security-token\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign:
                "AWS4-HMAC-SHA256\n20261123T120000Z\n20261123/eu-west-1/s3/aws4_request\n83ffca1f9fdbd7c71a0d72dec6ab58cfdffb407ebf6a8706d10c32d6110d06bc",
            signature: "a5e7feaef92432d3c1504eaede591a6815c0d0d59b5291c7026e0b668eb266bf")
        #expect(prepared.headers.contains { $0.name == "X-Amz-Security-Token" && $0.value == "FwoGZXIvYXdzEXAMPLE+/token==" })
    }

    @Test func aPartOfAMultipartUpload() {
        let prepared = Self.client("http://minio.local:9000", region: "us-east-1", pathStyle: true)
            .prepare(
                method: "PUT", key: "originals/" + Self.sha, query: [("partNumber", "2"), ("uploadId", "VXBsb2FkIElE+/=")],
                headers: [("Content-MD5", "XrY7u+Ae7tCTyyK7j1rNww==")],
                payloadSHA256: "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", date: Self.date)
        expect(
            prepared,
            url: "http://minio.local:9000/flipbook-media/originals/\(Self.sha)?partNumber=2&uploadId=VXBsb2FkIElE%2B%2F%3D",
            canonicalRequest:
                "PUT\n/flipbook-media/originals/5b5650cd1a4b2ff1c969959d565bf5504689a99de2e004797ed39dda57f34f59\npartNumber=2&uploadId=VXBsb2FkIElE%2B%2F%3D\ncontent-md5:XrY7u+Ae7tCTyyK7j1rNww==\nhost:minio.local:9000\nx-amz-content-sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\nx-amz-date:20261123T120000Z\n\ncontent-md5;host;x-amz-content-sha256;x-amz-date\n2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
            stringToSign:
                "AWS4-HMAC-SHA256\n20261123T120000Z\n20261123/us-east-1/s3/aws4_request\n15503f33d2794173f3c6af02c3ca884574343df53025feee383ed95efac69cc5",
            signature: "b7f6a81121842fc82b9c2e702a00cfbfab81672a77f94f1b31aab7b1c4877ad2")
    }

    @Test func aConditionalGetOfAName() {
        let prepared = Self.client("http://127.0.0.1:9000", region: "us-east-1", pathStyle: true)
            .prepare(
                method: "GET", key: "names/clip-01.gif", headers: [("If-None-Match", "\"0123456789abcdef0123456789abcdef\"")],
                payloadSHA256: SigV4Signer.emptyPayloadSHA256, date: Self.date)
        expect(
            prepared, url: "http://127.0.0.1:9000/flipbook-media/names/clip-01.gif",
            canonicalRequest:
                "GET\n/flipbook-media/names/clip-01.gif\n\nhost:127.0.0.1:9000\nif-none-match:\"0123456789abcdef0123456789abcdef\"\nx-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\nx-amz-date:20261123T120000Z\n\nhost;if-none-match;x-amz-content-sha256;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            stringToSign:
                "AWS4-HMAC-SHA256\n20261123T120000Z\n20261123/us-east-1/s3/aws4_request\n21d62e2d19498622f1e5b801441929dab57f17b0c3248e4ca6a7570b33176be1",
            signature: "731cef9dd7f7d8110027e863e3cc7b2d27b01e816f39b352ee76e6ac12251b62")
    }

    @Test func endpointsAndKeys() {
        #expect(S3Endpoint("https://s3.example.com:443") == S3Endpoint("https://s3.example.com"))
        #expect(S3Endpoint("http://10.0.0.5:8333")?.authority(host: "10.0.0.5") == "10.0.0.5:8333")
        for bad in ["s3.example.com", "ftp://x", "http://", "http://x:0", "http://x/path", "http://u@x"] {
            #expect(S3Endpoint(bad) == nil, "\(bad)")
        }
        let layout = S3Layout(prefix: "prod")
        #expect(layout.original(Self.sha) == "prod/originals/" + Self.sha)
        #expect(layout.meta(Self.sha) == "prod/meta/\(Self.sha).json")
        #expect(layout.name("clip.gif") == "prod/names/clip.gif")
        #expect(layout.ref(Self.sha, "clip.gif") == "prod/refs/\(Self.sha)/clip.gif")
        #expect(layout.contentID(ofMetaKey: "prod/meta/\(Self.sha).json") == Self.sha)
        #expect(layout.contentID(ofMetaKey: "prod/meta/clip.gif.json") == nil)
        #expect(layout.imageName(ofNameKey: "prod/names/clip.gif") == "clip.gif")
        #expect(!S3Layout.isValidPrefix("/abs") && !S3Layout.isValidPrefix("a b") && S3Layout.isValidPrefix("a/b-c_d.e/"))
    }

    @Test func xmlAnswersAreRead() {
        let list = Array(
            """
            <?xml version="1.0" encoding="UTF-8"?><ListBucketResult><IsTruncated>true</IsTruncated>\
            <Contents><Key>p/meta/a&amp;b.json</Key></Contents><Contents><Key>p/names/x&#x2F;y</Key></Contents>\
            <NextContinuationToken>1ueGcxLPR&lt;x&gt;</NextContinuationToken></ListBucketResult>
            """.utf8)
        #expect(S3XML.values(of: "Key", in: list) == ["p/meta/a&b.json", "p/names/x/y"])
        #expect(S3XML.value(of: "NextContinuationToken", in: list) == "1ueGcxLPR<x>")
        #expect(S3XML.errorCode(list) == nil)
        let error = Array("<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>".utf8)
        #expect(S3XML.errorCode(error) == "SlowDown")
        #expect(S3Client.isRetryable(S3Client.Response(status: 503, headers: [:], body: error)))
        #expect(S3Client.isRetryable(S3Client.Response(status: 429, headers: [:], body: [])))
        #expect(!S3Client.isRetryable(S3Client.Response(status: 404, headers: [:], body: [])))
        #expect(!S3Client.isRetryable(S3Client.Response(status: 403, headers: [:], body: [])))
    }

    @Test func backoffIsCappedAndJittered() {
        let client = Self.client("http://127.0.0.1:9000", region: "us-east-1", pathStyle: true)
        var waits: [Double] = []
        for attempt in 1...12 { waits.append(client.backoff(attempt: attempt)) }
        #expect(waits.allSatisfy { $0 >= 0 && $0 <= client.configuration.maxBackoffSeconds })
        #expect(Set(waits).count > 1)  // jittered, not a fixed schedule
    }
}
