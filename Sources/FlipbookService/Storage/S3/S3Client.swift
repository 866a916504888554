import AnimatedImage
import Crypto
import Dispatch
import Foundation
import Metrics
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The few S3 operations Flipbook needs (GET, HEAD, PUT, DELETE of objects, ListObjectsV2,
/// multipart uploads), signed with ``SigV4Signer`` and sent with FoundationNetworking's
/// `URLSession` (libcurl: TLS, proxies, keep-alive). Synchronous: callers are storage and decode
/// threads, never event loops.
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
    private let session: URLSession
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
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = configuration.requestTimeoutSeconds
        sessionConfiguration.timeoutIntervalForResource = 3600
        sessionConfiguration.httpMaximumConnectionsPerHost = 16
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.urlCache = nil
        sessionConfiguration.httpShouldSetCookies = false
        session = URLSession(configuration: sessionConfiguration)
    }

    deinit {
        session.invalidateAndCancel()
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
            switch perform(prepared, method: method, body: body) {
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
                lastFailure = "\(operation) \(key ?? "/"): \(error.localizedDescription)"
            }
        }
        state.withLock {
            $0.reachable = false
            $0.lastError = lastFailure
        }
        throw .unavailable(lastFailure)
    }

    /// A download's file could not be put in place (a full or read-only disk): Flipbook's
    /// failure, not S3's, so it is neither retried nor a sign that S3 is unreachable.
    private struct LocalFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// Downloads `key` into the file `destination` (created; removed again on failure) and
    /// returns the answer (its body empty); a status other than 200 leaves no file.
    ///
    /// Foundation receives the body into a file of its own in the process's temporary directory
    /// (`TMPDIR`) and stops the process if it cannot create it; `flipbook serve` points that
    /// directory at the data directory (``S3Backend/keepDownloadsInDataDirectory(_:)``). Writing
    /// the body there, Foundation keeps pace with the network: a delegate receiving it in memory
    /// instead was measured to hold 122 MB of a 200 MB original from a loopback S3 server.
    func download(_ operation: String, key: String, to destination: String) throws(StorageFailure) -> Response {
        try Self.checkTemporaryDirectory(for: "\(operation) \(key)")
        let attempts = isReachable ? 1 + max(0, configuration.retries) : 1
        var lastFailure = ""
        for attempt in 0..<attempts {
            if attempt > 0 { Self.sleep(seconds: backoff(attempt: attempt)) }
            let prepared = prepare(method: "GET", key: key, payloadSHA256: SigV4Signer.emptyPayloadSHA256, date: Date())
            let result = Once<Result<Response, any Error>>()
            let task = session.downloadTask(with: request(prepared, method: "GET")) { location, response, error in
                if let error {
                    result.set(.failure(error))
                    return
                }
                let response = Self.response(response, body: [])
                // Foundation leaves the file it downloaded into (in the system's temporary
                // directory) to the handler: it is moved on success and removed otherwise, or
                // every missing key and error answer would leave a file behind.
                defer { if let location { unlink(location.path) } }
                if response.status == 200, let location {
                    do {
                        unlink(destination)
                        try FileManager.default.moveItem(atPath: location.path, toPath: destination)
                    } catch {
                        result.set(.failure(LocalFailure(description: "cannot move it to \(destination): \(error)")))
                        return
                    }
                } else if let location {
                    let body = (try? Data(contentsOf: location)).map { [UInt8]($0.prefix(4096)) } ?? []
                    result.set(.success(Response(status: response.status, headers: response.headers, body: body)))
                    return
                }
                result.set(.success(response))
            }
            task.resume()
            switch result.wait() {
            case .success(let response):
                count(operation, status: String(response.status))
                if Self.isRetryable(response) {
                    lastFailure = "\(operation) \(key): HTTP \(response.status)"
                    continue
                }
                state.withLock { $0.reachable = true }
                return response
            case .failure(let failure as LocalFailure):
                unlink(destination)
                count(operation, status: "error")
                throw .failed("\(operation) \(key): \(failure)")
            case .failure(let error):
                unlink(destination)
                count(operation, status: "error")
                lastFailure = "\(operation) \(key): \(error.localizedDescription)"
            }
        }
        state.withLock {
            $0.reachable = false
            $0.lastError = lastFailure
        }
        throw .unavailable(lastFailure)
    }

    /// Fails unless a file can be made in the temporary directory, as Foundation is about to:
    /// it makes its download file with `try!`, so a directory it cannot write to (a data volume
    /// remounted read-only, a read-only /tmp outside `flipbook serve`) would stop the process
    /// instead of failing this one download. One create and one unlink per download.
    private static func checkTemporaryDirectory(for what: String) throws(StorageFailure) {
        let probe = NSTemporaryDirectory() + ".download-probe-" + UUID().uuidString
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .failed(
                "\(what): no file can be made in the temporary directory \(NSTemporaryDirectory()) "
                    + "(\(String(cString: strerror(errno)))), where the download would be received")
        }
        close(descriptor)
        unlink(probe)
    }

    private func request(_ prepared: Prepared, method: String) -> URLRequest {
        var request = URLRequest(
            url: prepared.url, cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: configuration.requestTimeoutSeconds)
        request.httpMethod = method
        for header in prepared.headers {
            request.setValue(header.value, forHTTPHeaderField: header.name)
        }
        return request
    }

    private func perform(_ prepared: Prepared, method: String, body: Body) -> Result<Response, any Error> {
        let request = request(prepared, method: method)
        let result = Once<Result<Response, any Error>>()
        let completion: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
            if let error {
                result.set(.failure(error))
            } else {
                result.set(.success(Self.response(response, body: data.map { [UInt8]($0) } ?? [])))
            }
        }
        let task: URLSessionTask
        switch body {
        case .empty:
            task =
                method == "PUT" || method == "POST"
                ? session.uploadTask(with: request, from: Data(), completionHandler: completion)
                : session.dataTask(with: request, completionHandler: completion)
        case .bytes(let bytes):
            task = session.uploadTask(with: request, from: Data(bytes), completionHandler: completion)
        case .mapped(let file, let offset, let length):
            let data = file.withUnsafeBytes { buffer in
                Data(
                    bytesNoCopy: UnsafeMutableRawPointer(mutating: buffer.baseAddress! + offset), count: length,
                    deallocator: .none)
            }
            task = session.uploadTask(with: request, from: data, completionHandler: completion)
        }
        task.resume()
        let outcome = result.wait()
        if case .mapped(let file, _, _) = body { withExtendedLifetime(file) {} }  // mapped until sent
        return outcome
    }

    private static func response(_ response: URLResponse?, body: [UInt8]) -> Response {
        guard let http = response as? HTTPURLResponse else { return Response(status: 0, headers: [:], body: body) }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return Response(status: http.statusCode, headers: headers, body: body)
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
