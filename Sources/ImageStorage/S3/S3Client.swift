import AnimatedImage
import Crypto
import Dispatch
import FoundationEssentials
import Glibc
import Metrics
import OutboundHTTP
import Synchronization

/// The few S3 operations Flipbook needs (GET, HEAD, PUT, DELETE of objects, ListObjectsV2,
/// multipart uploads), signed with ``SigV4Signer`` and sent with the outbound HTTP client
/// (``OutboundClient``, libcurl: TLS, keep-alive, the environment's proxy), whose connections are
/// kept for the next call.
/// Synchronous: callers are storage and decode threads, never event loops. A request times out
/// when nothing moves for `requestTimeoutSeconds` (connecting included), and after an hour in
/// all.
///
/// Each call is tried up to 1 + `retries` times when the server cannot be reached, times out,
/// answers 5xx or throttles (429, `SlowDown`), sleeping an exponentially growing, fully jittered
/// time between attempts; other answers are returned as they are. After a call fails that way
/// the client counts the server unreachable (``isReachable``) until a call succeeds again, and
/// meanwhile tries each call once: callers fail fast instead of queueing behind timeouts.
/// Every attempt is counted in `flipbook_s3_requests_total{operation, status}`.
final class S3Client: Sendable {
    /// How to reach the bucket.
    struct Configuration: Sendable {
        var endpoint: S3Endpoint
        var region: String
        var bucket: String
        var pathStyle: Bool
        var credentials: S3Credentials
        var requestTimeoutSeconds: Double
        var retries: Int
        /// First backoff; doubled per attempt, at most `maxBackoffSeconds`, then jittered.
        var baseBackoffSeconds = 0.1
        var maxBackoffSeconds = 2.0
    }

    /// A request body: nothing, bytes, or part of a memory-mapped file.
    enum Body: Sendable {
        case empty
        case bytes([UInt8])
        /// `length` bytes at `offset` of `file`, which stays mapped while the request runs.
        case mapped(ImageBytes, offset: Int, length: Int)

        /// Calls `body` with the bytes to send (nil: none), valid for the call.
        func withUnsafeBytes<Value>(_ body: (UnsafeRawBufferPointer?) throws(OutboundFailure) -> Value)
            throws(OutboundFailure) -> Value
        {
            let result: Result<Value, OutboundFailure>
            switch self {
            case .empty:
                result = Result { () throws(OutboundFailure) in try body(nil) }
            case .bytes(let bytes):
                result = bytes.withUnsafeBytes { buffer in Result { () throws(OutboundFailure) in try body(buffer) } }
            case .mapped(let file, let offset, let length):
                result = file.withUnsafeBytes { buffer in
                    Result { () throws(OutboundFailure) in
                        try body(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length]))
                    }
                }
            }
            return try result.get()
        }
    }

    /// A complete answer.
    struct Response: Sendable {
        var status: Int
        /// Lower-cased names.
        var headers: [String: String]
        var body: [UInt8]

        var etag: String? { headers["etag"] }
    }

    /// What ``prepare(method:key:query:headers:body:date:)`` makes: the URL and the signed headers.
    struct Prepared: Sendable {
        var url: URL
        var headers: [(name: String, value: String)]
        var signed: SigV4Signer.Signed
    }

    let configuration: Configuration
    private let signer: SigV4Signer
    private let http = OutboundClient(reuseConnections: true, maxIdleHandles: 16)
    private let state = Mutex(Reachability())
    private let metricsFactory: any MetricsFactory
    private let counters = Mutex<[String: Counter]>([:])

    private struct Reachability {
        var reachable = true
        var lastError: String?
    }

    init(configuration: Configuration, metricsFactory: any MetricsFactory) {
        self.configuration = configuration
        self.metricsFactory = metricsFactory
        signer = SigV4Signer(credentials: configuration.credentials, region: configuration.region)
    }

    /// False after a call failed for want of the server (all attempts), until one succeeds.
    var isReachable: Bool { state.withLock { $0.reachable } }

    /// Why the last failed call failed, while the server counts as unreachable.
    var lastError: String? { state.withLock { $0.reachable ? nil : $0.lastError } }

    // MARK: Requests

    /// The URL of `key` (nil: the bucket) with `query`, percent-encoded exactly as signed.
    func url(key: String?, query: [(String, String)]) -> (url: URL, host: String, path: String) {
        let endpoint = configuration.endpoint
        let host = configuration.pathStyle ? endpoint.host : configuration.bucket + "." + endpoint.host
        let path = (configuration.pathStyle ? "/" + configuration.bucket : "") + "/" + (key ?? "")
        var text = endpoint.scheme + "://" + endpoint.authority(host: host) + SigV4Signer.canonicalURI(path, normalize: false)
        if !query.isEmpty { text += "?" + SigV4Signer.canonicalQuery(query) }
        return (URL(string: text)!, endpoint.authority(host: host), path)
    }

    /// The URL and signed headers of one attempt.
    func prepare(
        method: String, key: String?, query: [(String, String)] = [], headers: [(String, String)] = [],
        payloadSHA256: String, date: Date
    ) -> Prepared {
        let (url, host, path) = url(key: key, query: query)
        let signed = signer.sign(
            method: method, path: path, query: query, headers: [("Host", host)] + headers,
            payloadSHA256: payloadSHA256, date: date)
        return Prepared(
            url: url, headers: signed.headers + [(name: "Authorization", value: signed.authorization)],
            signed: signed)
    }

    /// Sends a request (with retries, see the type's description) and returns the server's
    /// answer, whatever its status. Throws ``StorageFailure/unavailable(_:)`` when no attempt got
    /// an answer that is not a server error.
    func send(
        _ operation: String, method: String, key: String?, query: [(String, String)] = [],
        headers: [(String, String)] = [], body: Body = .empty, payloadSHA256: String? = nil
    ) throws(StorageFailure) -> Response {
        let hash = payloadSHA256 ?? Self.sha256(of: body)
        let attempts = isReachable ? 1 + max(0, configuration.retries) : 1
        var lastFailure = ""
        for attempt in 0..<attempts {
            if attempt > 0 { Self.sleep(seconds: backoff(attempt: attempt)) }
            let prepared = prepare(
                method: method, key: key, query: query, headers: headers, payloadSHA256: hash,
                date: Date())
            switch perform(prepared, method: method, body: body, into: nil) {
            case .success(let response):
                count(operation, status: String(response.status))
                if Self.isRetryable(response) {
                    lastFailure = "\(operation) \(key ?? "/"): HTTP \(response.status) \(S3XML.errorCode(response.body) ?? "")"
                    continue
                }
                state.withLock { $0.reachable = true }
                return response
            case .failure(let error):
                count(operation, status: "error")
                lastFailure = "\(operation) \(key ?? "/"): \(error)"
            }
        }
        state.withLock {
            $0.reachable = false
            $0.lastError = lastFailure
        }
        throw .unavailable(lastFailure)
    }

    /// Downloads `key` into the file `destination` (created; removed again on failure) and
    /// returns the answer (its body empty); a status other than 200 leaves no file, and the answer
    /// keeps the first 4 KiB of its body (an error document). The body is written to the file as
    /// it arrives. A file that cannot be written (a full or read-only disk) is Flipbook's failure,
    /// not S3's: it is neither retried nor a sign that S3 is unreachable.
    func download(_ operation: String, key: String, to destination: String) throws(StorageFailure) -> Response {
        let attempts = isReachable ? 1 + max(0, configuration.retries) : 1
        var lastFailure = ""
        for attempt in 0..<attempts {
            if attempt > 0 { Self.sleep(seconds: backoff(attempt: attempt)) }
            let prepared = prepare(method: "GET", key: key, payloadSHA256: SigV4Signer.emptyPayloadSHA256, date: Date())
            switch perform(prepared, method: "GET", body: .empty, into: destination) {
            case .success(let response):
                count(operation, status: String(response.status))
                if Self.isRetryable(response) {
                    lastFailure = "\(operation) \(key): HTTP \(response.status)"
                    continue
                }
                state.withLock { $0.reachable = true }
                return response
            case .failure(.local(let why)):
                unlink(destination)
                count(operation, status: "error")
                throw .failed("\(operation) \(key): \(why)")
            case .failure(let error):
                unlink(destination)
                count(operation, status: "error")
                lastFailure = "\(operation) \(key): \(error)"
            }
        }
        state.withLock {
            $0.reachable = false
            $0.lastError = lastFailure
        }
        throw .unavailable(lastFailure)
    }

    /// Why an attempt got no answer.
    enum AttemptFailure: Error, CustomStringConvertible {
        /// The server could not be reached, or the exchange failed or timed out.
        case transport(OutboundFailure)
        /// The answer could not be put in its file here.
        case local(String)

        var description: String {
            switch self {
            case .transport(let failure): failure.description
            case .local(let why): why
            }
        }
    }

    /// One attempt: the answer, its body in memory, or in the file `into` when it is a 200.
    private func perform(_ prepared: Prepared, method: String, body: Body, into file: String?)
        -> Result<Response, AttemptFailure>
    {
        var headers = prepared.headers.map { "\($0.name): \($0.value)" }
        // No `Expect: 100-continue` round trip before a large PUT; no form type on a bare POST.
        headers.append("Expect:")
        if !prepared.headers.contains(where: { $0.name.lowercased() == "content-type" }) { headers.append("Content-Type:") }
        let timeout = configuration.requestTimeoutSeconds
        let request = OutboundRequest(
            method: method, url: prepared.url.absoluteString, headers: headers, timeoutMilliseconds: 3_600_000,
            connectTimeoutMilliseconds: Int(timeout * 1000), idleTimeoutSeconds: Int(timeout.rounded(.up)),
            environmentProxy: true)
        let receiver = S3Answer(file: file)
        defer { receiver.close() }
        do throws(OutboundFailure) {
            _ = try body.withUnsafeBytes { bytes throws(OutboundFailure) in
                try http.perform(request, body: bytes, receiver: receiver)
            }
        } catch {
            if let why = receiver.localFailure { return .failure(.local(why)) }
            return .failure(.transport(error))
        }
        return .success(Response(status: receiver.status, headers: receiver.headers, body: receiver.body))
    }

    /// Server errors and throttling are worth another attempt; anything else is an answer.
    static func isRetryable(_ response: Response) -> Bool {
        response.status == 0 || response.status >= 500 || response.status == 429
            || (response.status == 400 && S3XML.errorCode(response.body) == "RequestTimeout")
    }

    /// Full jitter: a uniformly random wait up to the capped exponential backoff.
    func backoff(attempt: Int) -> Double {
        let cap = min(configuration.maxBackoffSeconds, configuration.baseBackoffSeconds * Double(1 << min(attempt, 20)))
        return Double.random(in: 0...cap)
    }

    private static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        usleep(UInt32(seconds * 1_000_000))
    }

    static func sha256(of body: Body) -> String {
        switch body {
        case .empty: return SigV4Signer.emptyPayloadSHA256
        case .bytes(let bytes): return SigV4Signer.sha256Hex(bytes)
        case .mapped(let file, let offset, let length):
            return file.withUnsafeBytes {
                ContentHash.hex(SHA256.hash(data: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + length])))
            }
        }
    }

    static func md5Base64(of body: Body) -> String {
        let digest: Insecure.MD5Digest
        switch body {
        case .empty: digest = Insecure.MD5.hash(data: [UInt8]())
        case .bytes(let bytes): digest = Insecure.MD5.hash(data: bytes)
        case .mapped(let file, let offset, let length):
            digest = file.withUnsafeBytes {
                Insecure.MD5.hash(data: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + length]))
            }
        }
        return Data(digest).base64EncodedString()
    }

    // MARK: Metrics

    private func count(_ operation: String, status: String) {
        let key = operation + " " + status
        let counter = counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(
                label: "flipbook_s3_requests_total",
                dimensions: [("operation", operation), ("status", status)], factory: metricsFactory)
            counters[key] = counter
            return counter
        }
        counter.increment()
    }
}

/// A value set once by one thread and waited for by another.
final class Once<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    func set(_ newValue: Value) {
        value.withLock { $0 = newValue }
        ready.signal()
    }

    func wait() -> Value {
        ready.wait()
        return value.withLock { $0! }
    }
}
