import AnimatedImage
import Testing

@testable import FlipbookService

/// The rendition parameters of the frame routes, parsed: every bad value named, presets and
/// arbitrary parameters, negotiation by `Accept` (q-values, wildcards).
@Suite("Rendition parameters")
struct RenditionQueryTests {
    func policy(_ configure: (inout FlipbookSettings) -> Void = { _ in }) throws -> RenditionPolicy {
        var settings = FlipbookSettings()
        configure(&settings)
        return try RenditionPolicy(settings)
    }

    func items(_ query: String) -> [(name: String, value: String)] {
        query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
    }

    @Test(arguments: [
        ("width=abc", "width"), ("width=0", "width"), ("width=-5", "width"), ("width=1.5", "width"), ("width=", "width"),
        ("width=+3", "width"), ("height=x", "height"), ("height=0", "height"), ("dpr=0.5", "dpr"), ("dpr=5", "dpr"),
        ("dpr=abc", "dpr"), ("dpr=1.1234567", "dpr"), ("fit=stretch", "fit"), ("fit=COVER", "fit"),
        ("enlarge=yes", "enlarge"), ("enlarge=1", "enlarge"), ("format=jpeg", "format"), ("format=WEBP", "format"),
        ("format=webp&quality=0", "quality"), ("format=webp&quality=101", "quality"), ("format=webp&quality=q", "quality"),
        ("quality=80", "quality"), ("format=png&quality=80", "quality"), ("fit=cover&width=10", "fit"),
        ("fit=fill&height=10", "fit"), ("fit=cover", "fit"), ("width=10&width=20", "width"), ("r=thumb", "r"),
        ("r=a&r=b", "r"), ("width=4097", "limits.maxOutputDimension"), ("width=2049&dpr=2", "limits.maxOutputDimension"),
        ("height=99999999999999999999999", "limits.maxOutputDimension"), ("dpr=2&dpr=2", "dpr"),
    ])
    func badParametersAreRefusedByName(query: String, parameter: String) throws {
        let error = #expect(throws: RenditionParameterError.self) {
            try policy().requested(items(query), accept: nil)
        }
        #expect(error?.parameter == parameter, "\(query): \(String(describing: error))")
        if parameter == "limits.maxOutputDimension" {
            #expect(error?.detail.contains("limits.maxOutputDimension (4096)") == true)
        } else {
            #expect(error?.detail.contains(parameter) == true)
        }
    }

    @Test func goodParametersBecomeARequest() throws {
        let requested = try policy().requested(
            items("width=320&height=200&dpr=1.5&fit=cover&enlarge=true&format=webp&quality=75&t=9&cachebust=1"),
            accept: nil)
        #expect(
            requested.request
                == RenditionRequest(
                    width: 320, height: 200, dpr: DevicePixelRatio(decimal: "1.5")!, fit: .cover, enlarge: true,
                    format: .webp, quality: 75))
        #expect(!requested.negotiated)
        #expect(try policy().requested([], accept: nil) == .full)
    }

    @Test(arguments: [
        ("image/webp", true), ("image/avif,image/webp,*/*", true), ("image/webp;q=0.5", true),
        ("image/webp;q=0", false), ("image/webp; q=0.000", false), ("*/*", false), ("image/*", false), ("", false),
        ("image/png,image/webp;q=0.001", true), ("IMAGE/WEBP", true), ("image/webp;q=0,image/webp;q=1", true),
        ("text/html, image/webp ; q=0.9", true), ("image/webpx", false), ("image/webp;q=abc", true),
    ])
    func autoNegotiatesByAccept(accept: String, webp: Bool) throws {
        let requested = try policy().requested(items("format=auto&width=10"), accept: Substring(accept))
        #expect(requested.request.format == (webp ? .webp : .png), "Accept: \(accept)")
        #expect(requested.negotiated)
    }

    @Test func autoNegotiatedToPNGIgnoresQuality() throws {
        let png = try policy().requested(items("format=auto&quality=60"), accept: "*/*")
        #expect(png.request.format == .png && png.request.quality == nil)
        let webp = try policy().requested(items("format=auto&quality=60"), accept: "image/webp")
        #expect(webp.request.format == .webp && webp.request.quality == 60)
    }

    @Test func theDefaultFormatAppliesWhenNoneIsGiven() throws {
        let auto = try policy { $0.renditions.defaultFormat = "auto" }
        #expect(try auto.requested([], accept: "image/webp").request.format == .webp)
        #expect(try auto.requested([], accept: "image/webp").negotiated)
        #expect(try auto.requested(items("format=png"), accept: "image/webp").negotiated == false)
        let webp = try policy { $0.renditions.defaultFormat = "webp" }
        #expect(try webp.requested(items("quality=50"), accept: nil).request.quality == 50)
        #expect(throws: RenditionParameterError.self) { try policy { $0.renditions.defaultFormat = "gif" } }
    }

    @Test func presetsAndTheirOverrides() throws {
        let policy = try policy { $0.renditions.presets = ["thumb:width=160&format=webp&quality=75", "card:width=320"] }
        let thumb = try policy.requested(items("r=thumb"), accept: nil)
        #expect(thumb.request == RenditionRequest(width: 160, format: .webp, quality: 75))
        let wider = try policy.requested(items("r=thumb&width=240"), accept: nil)
        #expect(wider.request.width == 240 && wider.request.quality == 75)
        let unknown = #expect(throws: RenditionParameterError.self) { try policy.requested(items("r=huge"), accept: nil) }
        #expect(unknown?.parameter == "r")
        #expect(unknown?.detail.contains("card, thumb") == true)
    }

    @Test func withoutArbitraryParametersOnlyPresetsAreServed() throws {
        let policy = try policy {
            $0.renditions.presets = ["thumb:width=160"]
            $0.renditions.allowArbitrary = false
        }
        #expect(try policy.requested(items("r=thumb&t=5"), accept: nil).request.width == 160)
        #expect(try policy.requested([], accept: nil) == .full)
        for query in ["width=100", "r=thumb&format=webp", "dpr=2"] {
            let error = #expect(throws: RenditionParameterError.self) { try policy.requested(items(query), accept: nil) }
            #expect(error?.detail.contains("Only presets") == true, "\(query)")
        }
    }

    @Test(arguments: ["thumb", ":width=1", "bad name:width=1", "x:width=abc", "x:r=y", "x:colour=red", "x:width"])
    func malformedPresetsStopStartUp(entry: String) {
        #expect(throws: RenditionParameterError.self) { try policy { $0.renditions.presets = [entry] } }
    }
}
