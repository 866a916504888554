extension RenditionPolicy {
    /// The policy of `settings`; a malformed setting is an error naming it.
    init(_ settings: FlipbookSettings) throws(RenditionParameterError) {
        try self.init(
            defaultFormat: settings.renditions.defaultFormat, presets: settings.renditions.presets,
            allowArbitrary: settings.renditions.allowArbitrary, maxOutputDimension: settings.limits.maxOutputDimension)
    }
}
