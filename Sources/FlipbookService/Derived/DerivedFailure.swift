import HTTPServer

/// Why a storyboard or preview was not made, and the answer that says so.
enum DerivedFailure: Error, Sendable, Equatable {
    /// The product breaks a limit (422): the limit's name and the detail.
    case limit(String, String)
    /// The image cannot be decoded (422).
    case undecodable(String)
    /// Too many builds wait for decode memory (429 with `Retry-After`).
    case busy
    /// The image is gone (404).
    case missing(String)
    /// The disk failed (500, logged).
    case io(String)

    /// The problem response of this failure.
    var response: HTTPResponse {
        switch self {
        case .limit(_, let detail):
            return .problem(.unprocessableContent, detail: detail)
        case .undecodable(let why):
            return .problem(.unprocessableContent, detail: "The image cannot be decoded: \(why).")
        case .busy:
            return .problem(
                .tooManyRequests, detail: "Too many products wait for decode memory; retry shortly.",
                headers: ["Retry-After": "2"])
        case .missing(let id):
            return .problem(.notFound, detail: "No image with id '\(id)'.")
        case .io:
            return .problem(.internalServerError, detail: "The product could not be stored; the error is logged.")
        }
    }
}
