import FlipbookTestSupport
import Testing

@testable import AnimatedImage

/// Whatever the bytes, the decoder answers with frames or a typed error: never a crash, a hang
/// or an out-of-bounds read. Every corpus file is cut at many lengths and corrupted at random.
@Suite("Damaged input")
struct DamagedInputTests {
    static let samples = [
        "wuffs/muybridge.gif", "pillow/gif/iss634.gif", "wuffs/muybridge.apng",
        "image-rs-image/images/png/apng/ball.png", "pillow/webp/iss634.webp",
        "image-rs-image-webp/images/animated/random_lossy.webp",
        "pygif/interlace.gif", "pillow/apng/mode_16bit.png",
    ]

    /// Decodes every frame it can; returns how many frames were served.
    @discardableResult
    static func exercise(_ bytes: [UInt8]) -> Int {
        guard let image = try? AnimatedImage(bytes: bytes) else { return 0 }
        let renderer = FrameRenderer(image: image)
        var served = 0
        for i in 0..<image.frameCount {
            guard let canvas = try? renderer.render(i) else { break }
            #expect(canvas.pixels.count == image.index.bytesPerFrame, "frame \(i) of a damaged input")
            _ = try? PNGEncoder().encode(canvas)
            served += 1
        }
        return served
    }

    @Test(arguments: samples)
    func truncationKeepsCompleteFrames(_ path: String) throws {
        let bytes = try Corpus.bytes(path)
        let whole = try AnimatedImage(bytes: bytes)
        let step = max(1, bytes.count / 97)
        for length in stride(from: 0, to: bytes.count, by: step) {
            let cut = Array(bytes.prefix(length))
            if let image = try? AnimatedImage(bytes: cut) {
                #expect(image.frameCount <= whole.frameCount)
                // The frames that survive a cut are the original frames.
                let renderer = FrameRenderer(image: image)
                let original = FrameRenderer(image: whole)
                let last = image.frameCount - 1
                if whole.format != .webp || image.index.frames[last] == whole.index.frames[last] {
                    #expect(try renderer.render(last) == original.render(last), "\(path) cut at \(length)")
                }
            }
            Self.exercise(cut)
        }
    }

    @Test(arguments: samples)
    func randomCorruptionNeverCrashes(_ path: String) throws {
        let bytes = try Corpus.bytes(path)
        var generator = SplitMix64(seed: UInt64(bytes.count))
        for _ in 0..<150 {
            var damaged = bytes
            let flips = 1 + Int(generator.next() % 8)
            for _ in 0..<flips {
                let at = Int(generator.next() % UInt64(damaged.count))
                damaged[at] = UInt8(truncatingIfNeeded: generator.next())
            }
            Self.exercise(damaged)
        }
    }

    /// Chromium shows no frame of a WebP whose RIFF data is cut short, even when whole frames
    /// precede the cut; bytes after the RIFF data are ignored.
    @Test(arguments: [
        "pillow/webp/iss634.webp", "image-rs-image-webp/images/animated/random_lossy.webp",
        "image-rs-image-webp/images/animated/random_lossless.webp",
    ])
    func aWebPCutShortIsRejectedAtEveryLength(_ path: String) throws {
        let bytes = try Corpus.bytes(path)
        let step = max(1, bytes.count / 211)
        for length in Array(stride(from: 0, to: bytes.count, by: step)) + [bytes.count - 1] {
            #expect(throws: AnimatedImageError.self, "\(path) cut at \(length) of \(bytes.count)") {
                try AnimatedImage(bytes: Array(bytes.prefix(length)))
            }
        }
        let whole = try AnimatedImage(bytes: bytes)
        #expect(!whole.index.truncated)
        let trailed = try AnimatedImage(bytes: bytes + Array("trailing bytes".utf8))
        #expect(trailed.frameCount == whole.frameCount && !trailed.index.truncated)
    }

    @Test func corpusNegativesNeverCrash() throws {
        for entry in Corpus.entries where entry.negative {
            Self.exercise(try Corpus.bytes(entry.path))
        }
    }

    @Test func noCompleteFrameIsATypedError() throws {
        for path in [
            "pygif/invalid-code.gif", "wuffs/artificial-gif/pixel-data-not-enough.gif",
            "pillow/apng/sequence_start.png", "wuffs/hippopotamus.interlaced.truncated.gif",
        ] {
            #expect(throws: AnimatedImageError.self, "\(path)") { try AnimatedImage(bytes: try Corpus.bytes(path)) }
        }
    }

    @Test func truncatedFilesAreMarked() throws {
        let image = try AnimatedImage(bytes: try Corpus.bytes("pillow/apng/sequence_gap.png"))
        #expect(image.frameCount == 1)
        #expect(image.index.truncated)
    }
}
