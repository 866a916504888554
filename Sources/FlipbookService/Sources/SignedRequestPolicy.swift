import FoundationEssentials
import HTTPServer
import URLSigning

/// Which requests must carry a valid `sig` when `security.urlKeys` is set, and the check
/// itself. A function of the method, the matched route and the query's parameter names (and, for
/// uploads, whether the body is a URL), so that it covers routes and parameters by name, before
/// the handlers that serve them exist. The names `security.signedRoutes` may list:
///
/// | name | requests |
/// |---|---|
/// | `renditions` | frame and metadata requests that carry a rendition parameter (`width`, `height`, `dpr`, `fit`, `enlarge`, `format`, `quality`); `r=` alone (a preset) is not one |
/// | `frames` | every frame request |
/// | `metadata` | every metadata and delay-table request |
/// | `previews` | `GET /images/{id}/preview…` |
/// | `storyboards` | `GET /images/{id}/storyboard…` |
/// | `sources` | `POST /images` and `PUT /images/{name}` by URL, `POST /images/{id}/refresh` |
/// | `uploads` | every `POST /images`, `PUT /images/{name}` and `POST /uploads` |
public struct SignedRequestPolicy: Sendable {
    public static let routeNames: Set<String> = [
        "renditions", "frames", "metadata", "previews", "storyboards", "sources", "uploads",
    ]
    /// Query parameters that make a frame or metadata request a rendition other than a preset.
    public static let renditionParameters: Set<String> = ["width", "height", "dpr", "fit", "enlarge", "format", "quality"]
    static let frameRoutes: Set<String> = ["/frames/:id/:index", "/frames/:id"]
    static let metadataRoutes: Set<String> = ["/images/:id", "/images/:id/delays"]
    static let uploadRoutes: Set<String> = ["/images", "/images/:id"]

    public let signature: URLSignature
    public let routes: Set<String>
    /// Unix seconds now (tests move it).
    let now: @Sendable () -> Int

    public init(
        signature: URLSignature, routes: Set<String>,
        now: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }
    ) {
        self.signature = signature
        self.routes = routes
        self.now = now
    }

    /// Whether a request of `method` on `route` (the router's pattern) with query parameters
    /// named `parameters` must be signed; `isURLSource` says an upload names a URL instead of
    /// carrying bytes.
    public func needsSignature(
        method: HTTPMethod, route: String, parameters: some Sequence<String>, isURLSource: Bool = false
    ) -> Bool {
        guard signature.isEnabled else { return false }
        let reading = method == .GET || method == .HEAD
        if reading, Self.frameRoutes.contains(route) || Self.metadataRoutes.contains(route) {
            if routes.contains("frames"), Self.frameRoutes.contains(route) { return true }
            if routes.contains("metadata"), Self.metadataRoutes.contains(route) { return true }
            return routes.contains("renditions") && parameters.contains { Self.renditionParameters.contains($0) }
        }
        if reading, route.hasPrefix("/images/:id/preview") { return routes.contains("previews") }
        if reading, route.hasPrefix("/images/:id/storyboard") { return routes.contains("storyboards") }
        if method == .POST, route == "/images/:id/refresh" { return routes.contains("sources") }
        if (method == .POST && route == "/images") || (method == .PUT && route == "/images/:id") {
            return routes.contains("uploads") || (routes.contains("sources") && isURLSource)
        }
        // An upload session is signed when it is opened; its id is then what lets the bytes in.
        if method == .POST && route == "/uploads" { return routes.contains("uploads") }
        return false
    }

    /// nil when `request` may proceed, else the 403 to answer with.
    public func refusal(_ request: HTTPRequest) -> HTTPResponse? {
        guard let route = request.route,
            needsSignature(
                method: request.method, route: route, parameters: request.queryItems.lazy.map(\.name),
                isURLSource: Self.isURLSource(request))
        else { return nil }
        guard let failure = signature.verify(request.target, now: now()) else { return nil }
        return .problem(.forbidden, detail: "This request must be signed: \(failure).")
    }

    /// An upload that names a URL (`Content-Type: application/json`, or a `url` parameter).
    static func isURLSource(_ request: HTTPRequest) -> Bool {
        if request.queryItems.contains(where: { $0.name == "url" }) { return true }
        guard let type = request.headers["Content-Type"] else { return false }
        return type.lowercased().hasPrefix("application/json")
    }
}
