import FoundationEssentials
import HTTPServer
import ImageStorage
import Logging

/// The answers every route shares: JSON bodies, a refusal's problem, the `304` of a validator,
/// and what storage that cannot answer turns into.
extension HTTPResponse {
    /// A JSON body (`Content-Type: application/json`) with `headers`.
    static func json(_ bytes: [UInt8], status: HTTPStatus = .ok, headers extra: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = extra
        headers.set(name: "Content-Type", value: "application/json")
        return HTTPResponse(status: status, headers: headers, body: bytes)
    }

    /// The problem document of a refusal.
    static func problem(_ error: HTTPError) -> HTTPResponse {
        .problem(error.status, detail: error.detail, headers: error.headers)
    }

    /// A `304` carrying the validators and caching headers the `200` would have had.
    static func notModified(etag: String, cacheControl: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add(name: "ETag", value: etag)
        headers.add(name: "Cache-Control", value: cacheControl)
        return HTTPResponse(status: .notModified, headers: headers)
    }

    /// The 404 for an id the store does not know.
    static func unknownImage(_ id: String) -> HTTPResponse {
        .problem(.notFound, detail: "No image with id '\(id)'.")
    }

    /// Seconds a client is asked to wait before retrying when storage is unreachable.
    static let storageRetryAfterSeconds = 2

    /// The 503 (with `Retry-After`) when storage cannot be reached.
    static func storageUnavailable(_ what: String = "Storage cannot be reached right now") -> HTTPResponse {
        .problem(
            .serviceUnavailable, detail: "\(what); retry shortly.",
            headers: ["Retry-After": String(storageRetryAfterSeconds)])
    }

    /// The answer when storage failed: 503 with `Retry-After` when it cannot be reached, else 500
    /// (logged).
    static func storageFailure(_ failure: StorageFailure, logger: Logger) -> HTTPResponse {
        switch failure {
        case .unavailable(let why):
            logger.warning("storage unavailable", metadata: ["error": "\(why)"])
            return storageUnavailable()
        case .failed(let why):
            logger.error("storage failed", metadata: ["error": "\(why)"])
            return .problem(.internalServerError, detail: "Storage failed; the error is logged.")
        }
    }
}

/// JSON as the service writes it: sorted keys, unescaped slashes, ISO 8601 dates.
enum JSONBody {
    static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
    }

    /// The `detail` of a problem document.
    static func problemDetail(_ response: HTTPResponse) -> String {
        struct Problem: Decodable { var detail: String? }
        let problem = try? JSONDecoder().decode(Problem.self, from: Data(response.body))
        return problem?.detail ?? response.status.reasonPhrase
    }
}
