import Testing

@testable import FlipbookService

/// `Accept` as frames and previews read it: q-values, wildcards, case, whitespace, malformed
/// parameters, as a table.
@Suite("Accept negotiation")
struct AcceptNegotiationTests {
    @Test(arguments: [
        // (Accept, frames take WebP, previews take WebP)
        ("image/webp", true, true),
        ("image/webp,*/*", true, true),
        ("IMAGE/WEBP", true, true),
        ("  image/webp ; q=0.5 , */*;q=0.1", true, true),
        ("image/webp;q=0", false, false),
        ("image/webp;q=0.000", false, false),
        ("image/webp;q=0, */*", false, false),
        ("image/webp;q=0.001", true, true),
        ("image/webp;level=1;Q=0", false, false),
        ("image/webp;q=bad", true, true),  // a malformed q counts as 1, as before
        ("*/*", false, true),
        ("image/*", false, true),
        ("image/*;q=0, */*", false, false),
        ("*/*;q=0", false, false),
        ("text/html, image/png", false, false),
        ("image/webpx, image/web", false, false),
        ("image/png;q=1,image/webp;q=0.2,image/webp;q=0", true, true),  // the highest q of a range
        ("", false, false),
        (",,;", false, false),
    ])
    func table(accept: String, frames: Bool, previews: Bool) {
        #expect(AcceptNegotiation.acceptsWebP(Substring(accept)) == frames)
        #expect(AcceptNegotiation.acceptsWebPOrWildcard(Substring(accept)) == previews)
    }

    @Test(
        arguments: [
            // (Accept, the format a `format=auto` preview takes; nil: none)
            ("image/avif,image/webp,*/*", PreviewFormat.avif),
            ("image/webp,image/avif", .avif),  // equal q: AVIF first
            ("image/avif;q=0.9,image/webp", .webp),
            ("image/avif;q=0,image/webp", .webp),
            ("image/avif;q=0,image/webp;q=0", nil),
            ("*/*", .webp),
            ("image/*", .webp),
            ("image/webp;q=0, image/*", .avif),
            ("IMAGE/AVIF", .avif),
            ("image/png", nil),
        ] as [(String, PreviewFormat?)])
    func previewFormatTable(accept: String, format: PreviewFormat?) {
        #expect(AcceptNegotiation.previewFormat(Substring(accept)) == format)
    }

    @Test func noFieldAtAll() {
        #expect(AcceptNegotiation.previewFormat(nil) == .webp)
        #expect(!AcceptNegotiation.acceptsWebP(nil))
        #expect(AcceptNegotiation.acceptsWebPOrWildcard(nil))
    }
}
