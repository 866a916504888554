import HTTPServer

/// Reading a request's `Accept` fields for the negotiation, kept apart from the parsing so that the
/// parser builds without the HTTP server (the rendition-query fuzz target compiles it alone).
extension AcceptNegotiation {
    /// The request's `Accept` fields as one list; nil when it has none, or only empty ones (which
    /// previews read as "anything").
    static func field(of request: HTTPRequest) -> Substring? {
        let values = request.headers.values(for: "Accept")
        let list = values.count == 1 ? values[0] : values.joined(separator: ",")
        return list.isEmpty ? nil : Substring(list)
    }
}
