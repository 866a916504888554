import AnimatedImage
import HTTPServer
import ImageStorage

/// The service's renditions: what a request's query and `Accept` field ask for (under the
/// settings' ``RenditionPolicy``), what that makes of an image's canvas, and the queries resolved
/// before for each event loop (``ResolvedRenditions``, the hit path of scaled frames).
final class RenditionResolver: Sendable {
    let policy: RenditionPolicy
    let resolved: ResolvedRenditions

    /// - Parameter loops: the HTTP server's event loops.
    init(policy: RenditionPolicy, loops: Int) {
        self.policy = policy
        resolved = ResolvedRenditions(loops: loops)
    }

    /// The rendition the request's query and `Accept` field ask for, or the 400's reason.
    func requested(_ request: HTTPRequest) -> Result<RequestedRendition, RenditionParameterError> {
        // Today's frame without a query: nothing to parse on the common path.
        if !request.hasQuery && policy.defaultFormat == .png { return .success(.full) }
        let items = request.queryItems
        if items.isEmpty && policy.defaultFormat == .png { return .success(.full) }
        return Result { () throws(RenditionParameterError) in
            try policy.requested(items, accept: AcceptNegotiation.field(of: request))
        }
    }

    /// What `requested` makes of a `width`×`height` canvas, or the 400's reason.
    func rendition(_ requested: RequestedRendition, canvasWidth width: Int, canvasHeight height: Int)
        -> Result<FrameRendition, RenditionParameterError>
    {
        if requested.isFull { return .success(.exact(width: width, height: height)) }
        return Result { () throws(RenditionParameterError) in
            try policy.rendition(requested, canvasWidth: width, canvasHeight: height)
        }
    }

    /// What `requested` makes of `record`'s canvas, or the 400's reason.
    func rendition(_ requested: RequestedRendition, of record: StoredImage) -> Result<FrameRendition, RenditionParameterError> {
        rendition(requested, canvasWidth: record.metadata.width, canvasHeight: record.metadata.height)
    }
}

extension RecordLookup {
    /// Calls `body` with the record of `id` and the rendition `requested` makes of it; answers 404
    /// when there is no such image and 400 when the rendition cannot be made of it.
    func withRendition(
        _ id: String, _ responder: HTTPResponder, _ requested: RequestedRendition, _ renditions: RenditionResolver,
        _ body: @escaping @Sendable (StoredImage, FrameRendition) -> HTTPHandlerResult
    ) -> HTTPHandlerResult {
        withKnownRecord(id, responder) { record, _ in
            switch renditions.rendition(requested, of: record) {
            case .success(let rendition): return body(record, rendition)
            case .failure(let error): return .now(.problem(.badRequest, detail: error.detail))
            }
        }
    }
}
