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

    @Test func noFieldAtAll() {
        #expect(!AcceptNegotiation.acceptsWebP(nil))
        #expect(AcceptNegotiation.acceptsWebPOrWildcard(nil))
    }
}
