import AnimatedImage
import HTTPServer
import ImageStorage

/// `GET /images/{id}/storyboard` (the JSON manifest), `GET /images/{id}/storyboard.vtt` (the
/// WebVTT thumbnail track) and `GET /derived/{sha256}/{product}/{file}` (the sheets, at
/// content-addressed URLs: the original's SHA-256 and the storyboard's parameters name their
/// bytes, so they are cached for a year). The manifest and the track answer once the sheets are
/// made and kept (``DerivedProducts``), so every URL they name can be fetched.
extension DerivedRoutes {
    func storyboard(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        storyboardDocument(request, responder, vtt: false)
    }

    func storyboardTrack(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        storyboardDocument(request, responder, vtt: true)
    }

    private func storyboardDocument(_ request: HTTPRequest, _ responder: HTTPResponder, vtt: Bool) -> HTTPHandlerResult {
        let id = request.pathParameters["id"] ?? ""
        let spec: StoryboardSpec
        do throws(StoryboardError) {
            spec = try StoryboardQuery.spec(request.queryItems)
        } catch {
            return .now(.problem(.badRequest, detail: error.detail))
        }
        return lookup.withKnownRecord(id, responder) { record, _ in
            let metadata = record.metadata
            let layout: StoryboardLayout
            do throws(StoryboardError) {
                layout = try StoryboardLayout(
                    spec, canvasWidth: metadata.width, canvasHeight: metadata.height,
                    timeline: Timeline(rawDelaysMs: metadata.frames.map(\.rawDelayMs), playCount: metadata.playCount),
                    maxSheetPixels: settings.derived.maxSheetPixels, maxTiles: settings.limits.decode.maxFrames,
                    maxOutputDimension: settings.limits.maxOutputDimension)
            } catch {
                return .now(.problem(.badRequest, detail: error.detail))
            }
            let key = layout.spec.key(tileHeight: layout.tileHeight)
            let etag = "\"\(vtt ? "sv" : "sb")-\(record.sha256.prefix(32))-\(key)-r\(AnimatedImage.outputRevision)\""
            let cacheControl = CachePolicy.of(record).header
            return whenProductReady(
                responder, start: { derived.storyboard(record, layout, completion: $0) },
                ready: {
                    if request.headers.ifNoneMatchMatches(etag) { return .notModified(etag: etag, cacheControl: cacheControl) }
                    var headers = HTTPHeaders()
                    headers.add(name: "Content-Type", value: vtt ? "text/vtt; charset=utf-8" : "application/json")
                    headers.add(name: "ETag", value: etag)
                    headers.add(name: "Cache-Control", value: cacheControl)
                    let body =
                        vtt
                        ? StoryboardDocuments.vtt(sha256: record.sha256, layout: layout)
                        : StoryboardDocuments.manifest(id: record.id, sha256: record.sha256, layout: layout)
                    return HTTPResponse(headers: headers, body: body)
                })
        }
    }

    /// A sheet of a kept storyboard — kept here, or in the shared store (`storage.backend = s3`),
    /// then brought here first; 404 when it was never made or was removed (least recently used,
    /// or its image deleted): the manifest or track, asked for again, makes it again.
    func derivedFile(_ request: HTTPRequest, _ responder: HTTPResponder) -> HTTPHandlerResult {
        let sha = request.pathParameters["sha"] ?? ""
        let product = request.pathParameters["product"] ?? ""
        let file = request.pathParameters["file"] ?? ""
        let type: String
        if file.hasSuffix(".webp") {
            type = "image/webp"
        } else if file.hasSuffix(".png") {
            type = "image/png"
        } else {
            type = ""
        }
        guard ImageID.isContentID(sha), product.hasPrefix("storyboard-"), !type.isEmpty,
            ProductName.isValid(product), ProductName.isValid(file)
        else {
            return .now(DerivedFailure.notShared.response)
        }
        let etag = "\"d-\(sha.prefix(32))-\(product.dropFirst("storyboard-".count))-\(file)\""
        let path = derived.store.path(sha, product) + "/" + file
        let serve: @Sendable () -> HTTPResponse = {
            Self.productFile(request, path: path, contentType: type, etag: etag, cacheControl: CachePolicy.immutable.header)
        }
        if derived.store.contains(sha, product) { return .now(serve()) }
        // Made by another replica (which served the manifest): the shared store may have it.
        guard derived.shared != nil else { return .now(DerivedFailure.notShared.response) }
        return whenProductReady(responder, start: { derived.fetchSheets(sha, product, completion: $0) }, ready: serve)
    }
}
