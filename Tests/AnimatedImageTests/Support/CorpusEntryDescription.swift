import FlipbookTestSupport
import Testing

/// Parameterized corpus tests are named by the input's path.
extension Corpus.Entry: CustomTestStringConvertible {
    public var testDescription: String { path }
}
