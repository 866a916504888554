import HTTPServer

/// `GET /` (the image browser), `GET /player/{id}` (one image's player) and `GET /ui/{file}`
/// (their scripts and styles, and the `<flipbook-player>` component): files of ``WebAssets``.
struct UIRoutes: Sendable {
    let webAssets: WebAssets
    let lookup: RecordLookup

    func register(in router: inout Router) {
        router.get("/") { browserPage($0, $1) }
        router.get("/player/:id") { playerPage($0, $1) }
        router.get("/ui/:file") { uiFile($0, $1) }
    }

    /// The pages load only their own scripts, styles and images, talk only to this origin, and
    /// may not be framed: no inline script or style, no external asset.
    static let pageContentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; "
        + "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    func browserPage(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        .now(page("index.html", request, status: .ok))
    }

    /// The same page for every id; 404 when the id is unknown (the page says so).
    func playerPage(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        let id = request.pathParameters["id"] ?? ""
        return lookup.withRecord(id, responder) { record, _ in
            .now(page("player.html", request, status: record == nil ? .notFound : .ok))
        }
    }

    func uiFile(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        let name = request.pathParameters["file"] ?? ""
        guard let asset = webAssets[name] else {
            return .now(.problem(.notFound, detail: "No file \(name) in the web UI."))
        }
        return .now(Self.assetResponse(asset, request, status: .ok))
    }

    private func page(_ name: String, _ request: HTTPRequest, status: HTTPStatus) -> HTTPResponse {
        guard let asset = webAssets[name] else {
            return .problem(.notFound, detail: "The web UI is not installed (ui.dir has no \(name)).")
        }
        var response = Self.assetResponse(asset, request, status: status)
        response.headers.add(name: "Content-Security-Policy", value: Self.pageContentSecurityPolicy)
        response.headers.add(name: "Referrer-Policy", value: "no-referrer")
        return response
    }

    static func assetResponse(_ asset: WebAssets.Asset, _ request: HTTPRequest, status: HTTPStatus) -> HTTPResponse {
        if status == .ok && request.headers.ifNoneMatchMatches(asset.etag) {
            var response = HTTPResponse.notModified(etag: asset.etag, cacheControl: ImageRoutes.metadataCacheControl)
            response.headers.add(name: "X-Content-Type-Options", value: "nosniff")
            return response
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: asset.contentType)
        headers.add(name: "ETag", value: asset.etag)
        headers.add(name: "Cache-Control", value: ImageRoutes.metadataCacheControl)
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        return HTTPResponse(status: status, headers: headers, body: asset.body)
    }
}
