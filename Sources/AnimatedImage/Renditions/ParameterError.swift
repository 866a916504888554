/// A request parameter (or setting) that cannot be served: which one and why, a 400 problem's
/// detail. What a storyboard that cannot be laid out (``StoryboardError``) and a rendition
/// parameter that cannot be served (FlipbookService's `RenditionParameterError`) throw.
public struct ParameterError: Error, Sendable, Equatable {
    /// The query parameter (or setting) at fault.
    public var parameter: String
    public var detail: String

    public init(parameter: String, detail: String) {
        self.parameter = parameter
        self.detail = detail
    }
}
