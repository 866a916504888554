/// Trimming the blanks at either end of a piece of text (header values, list items, names): what
/// Foundation's `trimmingCharacters(in:)` did for `.whitespaces` and `.whitespacesAndNewlines`,
/// without Foundation (whose string methods link ICU).
extension StringProtocol {
    /// Without the spaces and tabs at either end (Unicode's space separators, as
    /// `CharacterSet.whitespaces` holds them).
    public func trimmingSpaces() -> String { trimming { $0 == "\t" || $0.properties.generalCategory == .spaceSeparator } }

    /// Without any whitespace or line break at either end (Unicode's White_Space property).
    public func trimmingWhitespace() -> String { trimming { $0.properties.isWhitespace } }

    private func trimming(_ blank: (Unicode.Scalar) -> Bool) -> String {
        let scalars = String(self).unicodeScalars
        guard let first = scalars.firstIndex(where: { !blank($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !blank($0) })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}
