import Testing

@testable import AnimatedImage

/// The size rule of renditions, as a table: every fit, `enlarge`, `dpr`, one dimension given,
/// rounding at .5, 1-px results, the output limit (docs/renditions.md, "The size rule"; openapi.yaml).
@Suite("Rendition size rule")
struct RenditionSizeRuleTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var canvas: (Int, Int)
        var width: Int?
        var height: Int?
        var dpr = "1"
        var fit = RenditionRequest.Fit.contain
        var enlarge = false
        /// Scaled size, then the crop (x, y, width, height) when there is one.
        var scaled: (Int, Int)
        var crop: (Int, Int, Int, Int)? = nil
        var testDescription: String {
            "\(canvas.0)×\(canvas.1) width=\(width.map(String.init) ?? "-") height=\(height.map(String.init) ?? "-") "
                + "dpr=\(dpr) fit=\(fit) enlarge=\(enlarge)"
        }
    }

    static let cases: [Case] = [
        // contain, one side given
        Case(canvas: (1280, 720), width: 320, scaled: (320, 180)),
        Case(canvas: (1280, 720), width: 320, dpr: "2", scaled: (640, 360)),
        Case(canvas: (1280, 720), height: 100, scaled: (178, 100)),  // 177.78 → 178
        // contain, both given: the smaller scale wins
        Case(canvas: (1280, 720), width: 320, height: 320, scaled: (320, 180)),
        Case(canvas: (1280, 720), width: 640, height: 90, scaled: (160, 90)),
        // never above the canvas without enlarge; enlarged with it
        Case(canvas: (1280, 720), width: 2000, scaled: (1280, 720)),
        Case(canvas: (1280, 720), width: 2000, enlarge: true, scaled: (2000, 1125)),
        Case(canvas: (100, 50), width: 150, height: 150, enlarge: true, scaled: (150, 75)),
        // no dimension: full size, whatever else is said
        Case(canvas: (1280, 720), dpr: "3", scaled: (1280, 720)),
        // rounding halves away from zero: 101 × 1.5 = 151.5 → 152; 720·152/1280 = 85.5 → 86
        Case(canvas: (1280, 720), width: 101, dpr: "1.5", scaled: (152, 86)),
        Case(canvas: (1000, 10), width: 50, scaled: (50, 1)),  // 0.5 → 1
        Case(canvas: (1000, 10), width: 10, scaled: (10, 1)),  // 0.1 → 0 → at least 1
        Case(canvas: (10, 1000), height: 4, scaled: (1, 4)),  // 0.04 → 0 → at least 1
        Case(canvas: (3, 3), width: 1, scaled: (1, 1)),
        // cover: the larger scale, then the centre
        Case(canvas: (1280, 720), width: 200, height: 200, fit: .cover, scaled: (356, 200), crop: (78, 0, 200, 200)),
        Case(canvas: (1280, 720), width: 320, height: 180, fit: .cover, scaled: (320, 180)),
        Case(canvas: (100, 100), width: 51, height: 50, fit: .cover, scaled: (51, 51), crop: (0, 0, 51, 50)),  // floor(1/2)
        Case(canvas: (1280, 720), width: 2000, height: 100, fit: .cover, scaled: (1280, 720), crop: (0, 310, 1280, 100)),
        Case(
            canvas: (1280, 720), width: 2000, height: 100, fit: .cover, enlarge: true, scaled: (2000, 1125),
            crop: (0, 512, 2000, 100)),
        Case(canvas: (1280, 720), width: 100, height: 100, dpr: "2", fit: .cover, scaled: (356, 200), crop: (78, 0, 200, 200)),
        // fill: each axis on its own
        Case(canvas: (1280, 720), width: 640, height: 100, fit: .fill, scaled: (640, 100)),
        Case(canvas: (1280, 720), width: 2000, height: 100, fit: .fill, scaled: (1280, 100)),
        Case(canvas: (1280, 720), width: 2000, height: 1000, fit: .fill, enlarge: true, scaled: (2000, 1000)),
        Case(canvas: (1280, 720), width: 333, height: 3, dpr: "1.5", fit: .fill, scaled: (500, 5)),  // 499.5 → 500, 4.5 → 5
    ]

    @Test(arguments: cases)
    func sizes(_ c: Case) throws {
        let request = RenditionRequest(
            width: c.width, height: c.height, dpr: try #require(DevicePixelRatio(decimal: Substring(c.dpr))),
            fit: c.fit, enlarge: c.enlarge, format: .png)
        let rendition = try request.rendition(canvasWidth: c.canvas.0, canvasHeight: c.canvas.1, maxOutputDimension: 4096)
        #expect(rendition.scaledWidth == c.scaled.0)
        #expect(rendition.scaledHeight == c.scaled.1)
        if let crop = c.crop {
            #expect(rendition.crop == PixelRect(x: crop.0, y: crop.1, width: crop.2, height: crop.3))
            #expect(rendition.outputWidth == crop.2 && rendition.outputHeight == crop.3)
        } else {
            #expect(rendition.crop == nil)
        }
    }

    @Test func aRenditionThatChangesNothingIsTheFullSizeFrame() throws {
        let same = try RenditionRequest(width: 2000).rendition(canvasWidth: 1280, canvasHeight: 720, maxOutputDimension: 4096)
        #expect(same.isExact(width: 1280, height: 720))
        #expect(same == .exact(width: 1280, height: 720))
        let webp = try RenditionRequest(format: .webp).rendition(canvasWidth: 1280, canvasHeight: 720, maxOutputDimension: 4096)
        #expect(!webp.isExact(width: 1280, height: 720))
        #expect(webp.key == "1280x720-webp-ll")
    }

    @Test func keysNameSizeCropAndEncoding() throws {
        let cover = try RenditionRequest(width: 200, height: 200, fit: .cover, format: .webp, quality: 80)
            .rendition(canvasWidth: 1280, canvasHeight: 720, maxOutputDimension: 4096)
        #expect(cover.key == "356x200+78+0-200x200-webp-q80")
        #expect(FrameRendition(scaledWidth: 320, scaledHeight: 180, format: .png, quality: 50).key == "320x180-png")
    }

    @Test(arguments: [
        (4097, "1", 4097), (2049, "2", 4098), (1366, "3", 4098), (99_999_999, "1", 99_999_999),
    ])
    func requestsAboveTheOutputLimitAreRefused(width: Int, dpr: String, pixels: Int) throws {
        let request = RenditionRequest(width: width, dpr: try #require(DevicePixelRatio(decimal: Substring(dpr))))
        #expect(throws: RenditionError.outputTooLarge(pixels, limit: 4096)) {
            try request.rendition(canvasWidth: 100, canvasHeight: 100, maxOutputDimension: 4096)
        }
        #expect(throws: Never.self) {
            try RenditionRequest(width: 4096).rendition(canvasWidth: 100, canvasHeight: 100, maxOutputDimension: 4096)
        }
    }

    @Test func anEnlargedResultAboveTheLimitIsRefusedToo() {
        // One side given, enlarged, of a very narrow canvas: 1×4000 at width 4000 would be 4000×16000000.
        #expect(throws: RenditionError.outputTooLarge(16_000_000, limit: 4096)) {
            try RenditionRequest(width: 4000, enlarge: true).rendition(
                canvasWidth: 1, canvasHeight: 4000, maxOutputDimension: 4096)
        }
    }

    @Test func coverAndFillNeedBothDimensions() {
        for fit in [RenditionRequest.Fit.cover, .fill] {
            #expect(throws: RenditionError.coverNeedsBoth(fit)) {
                try RenditionRequest(width: 100, fit: fit).rendition(canvasWidth: 10, canvasHeight: 10, maxOutputDimension: 4096)
            }
        }
    }

    @Test(arguments: [
        ("1", true), ("4", true), ("2.5", true), ("1.000001", true), ("4.000000", true), ("3.999999", true),
        ("0.5", false), ("4.01", false), ("4.000001", false), ("0", false), ("1.", false), (".5", false),
        ("1.1234567", false), ("01", false), ("+1", false), ("1e0", false), ("", false), ("1,5", false),
        ("٢", false),
    ])
    func devicePixelRatios(_ text: String, valid: Bool) {
        #expect((DevicePixelRatio(decimal: Substring(text)) != nil) == valid)
    }

    /// `isFull` (read on every frame request) says what `== .full` says, for the default request
    /// and for each parameter moved off its default alone.
    @Test func isFullAgreesWithEqualityToFull() throws {
        let one = try #require(DevicePixelRatio(decimal: "1"))
        let onePointZero = try #require(DevicePixelRatio(decimal: "1.0"))
        let two = try #require(DevicePixelRatio(decimal: "2"))
        let requests: [RenditionRequest] = [
            RenditionRequest(), .full, RenditionRequest(dpr: one), RenditionRequest(width: 320),
            RenditionRequest(height: 200), RenditionRequest(dpr: two), RenditionRequest(dpr: onePointZero),
            RenditionRequest(fit: .cover), RenditionRequest(fit: .fill), RenditionRequest(enlarge: true),
            RenditionRequest(format: .webp), RenditionRequest(format: .avif), RenditionRequest(quality: 80),
        ]
        for request in requests {
            #expect(request.isFull == (request == .full), "\(request)")
        }
        #expect(RenditionRequest().isFull)
        #expect(!RenditionRequest(quality: 80).isFull)
    }
}
