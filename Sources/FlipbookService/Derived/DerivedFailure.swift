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
    /// A storyboard sheet this replica does not keep and the shared store does not have (404).
    case notShared

    /// Every ``reason`` (the label values of `flipbook_derived_failures_total`).
    static let reasons = ["limit", "undecodable", "busy", "missing", "io", "not_shared"]

    /// The failure's kind, as metrics name it.
    var reason: String {
        switch self {
        case .limit: "limit"
        case .undecodable: "undecodable"
        case .busy: "busy"
        case .missing: "missing"
        case .io: "io"
        case .notShared: "not_shared"
        }
    }

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
        case .notShared:
            return .problem(.notFound, detail: "No such storyboard sheet; ask for the storyboard again.")
        case .io:
            return .problem(.internalServerError, detail: "The product could not be stored; the error is logged.")
        }
    }
}
