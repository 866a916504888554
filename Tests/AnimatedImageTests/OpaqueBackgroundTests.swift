import AnimatedImage
import Testing

/// `OpaqueBackground`: the hex colours it reads (and refuses), the form it writes back, and
/// compositing onto it.
@Suite struct OpaqueBackgroundTests {
    @Test(
        arguments: [
            ("ffffff", "ffffff"), ("FFF", "ffffff"), ("000", "000000"), ("20c040", "20c040"), ("20C040", "20c040"),
            ("a1B", "aa11bb"), ("0f0f0f", "0f0f0f"),
        ])
    func readsHexColours(text: String, written: String) throws {
        let colour = try #require(OpaqueBackground(hex: text))
        #expect(colour.hex == written)
        #expect(OpaqueBackground(hex: colour.hex) == colour)
    }

    @Test(arguments: [
        "", "ff", "ffff", "fffff", "fffffff", "#ffffff", "gggggg", "white", " fff", "fff ", "ff ff", "-12345", "１２３",
    ])
    func refusesAnythingElse(text: String) {
        #expect(OpaqueBackground(hex: text) == nil, "\(text)")
    }

    @Test func flatteningBlendsByAlphaAndKeepsOpaquePixels() {
        let background = OpaqueBackground(red: 0, green: 100, blue: 200)
        let pixels: [UInt8] = [
            10, 20, 30, 255,  // opaque: kept
            10, 20, 30, 0,  // transparent: the background
            255, 0, 0, 128,  // half: blended
        ]
        let out = background.flattened(pixels)
        #expect(Array(out[0..<4]) == [10, 20, 30, 255])
        #expect(Array(out[4..<8]) == [0, 100, 200, 255])
        // (255·128 + 0·127)/255 = 128, (0·128 + 100·127)/255 = 49.8, (0 + 200·127)/255 = 99.6
        #expect(Array(out[8..<12]) == [128, 50, 100, 255])
        #expect(OpaqueBackground.white.flattened([1, 2, 3, 0]) == [255, 255, 255, 255])
    }
}
