import AnimatedImage
import FlipbookTestSupport
import Foundation
import Testing

/// Every input of the shared corpus against Chromium's own decode of it (`../shared/corpus/chromium`).
@Suite("Chromium conformance")
struct CorpusConformanceTests {
    @Test("the corpus is present, with every manifest")
    func corpusIsPresent() {
        #expect(
            Corpus.manifests.contains("manifest.json") && Corpus.manifests.contains("flipbook-cases/manifest.json"),
            "no corpus at \(Corpus.root.path) (manifests found: \(Corpus.manifests)): clone ../shared beside the repository or set FLIPBOOK_CORPUS"
        )
        #expect(Corpus.entries.count >= 244 + 21)
    }

    @Test("matches Chromium", arguments: Corpus.entries)
    func matchesChromium(_ entry: Corpus.Entry) throws {
        let result = try Self.check(entry)
        #expect(result.failures.isEmpty, "\(entry.path): \(result.failures.joined(separator: "; "))")
    }

    @Test("conformance count, per manifest")
    func reportCount() throws {
        var failed: [String] = []
        for manifest in Corpus.manifests {
            let entries = Corpus.entries.filter { $0.manifest == manifest }
            var passed = 0
            for entry in entries {
                // A missing reference throws: a failure here, never a rejection.
                if (try? Self.check(entry))?.failures.isEmpty == true { passed += 1 } else { failed.append(entry.path) }
            }
            print(
                "Chromium conformance, \(manifest): \(passed)/\(entries.count) corpus inputs match (frames, frame counts, raw delays, repetition counts, rejections)"
            )
            #expect(!entries.isEmpty, "\(manifest) lists no input")
        }
        #expect(failed.isEmpty, "failing: \(failed)")
    }

    @Test("an input without meta.json or error.txt fails, and is not counted as a rejection")
    func aMissingReferenceIsNoRejection() throws {
        let corpus = FileManager.default.temporaryDirectory.appendingPathComponent("corpus-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: corpus) }
        let refused = corpus.appendingPathComponent("chromium/refused.webp")
        let missing = corpus.appendingPathComponent("chromium/missing.webp")
        for directory in [refused, missing] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        try Data("EncodingError: cannot decode".utf8).write(to: refused.appendingPathComponent("error.txt"))
        #expect(try Corpus.reference("refused.webp", in: corpus) == nil)
        #expect(throws: Corpus.MissingReference.self) { try Corpus.reference("missing.webp", in: corpus) }
    }

    struct Result { var failures: [String] = [] }

    static func check(_ entry: Corpus.Entry) throws -> Result {
        var result = Result()
        let bytes = try Corpus.bytes(entry.path)
        let reference = try Corpus.reference(entry.path)
        let image: AnimatedImage
        do {
            image = try AnimatedImage(bytes: bytes)
        } catch let error as AnimatedImageError {
            // Flipbook rejects: right only when Chromium shows no complete frame.
            if let reference, !reference.frames.isEmpty {
                result.failures.append("rejected (\(error)) but Chromium decodes \(reference.frames.count) frame(s)")
            } else if error.description.isEmpty {
                result.failures.append("rejected without a message")
            }
            return result
        }
        guard let reference, !reference.frames.isEmpty else {
            result.failures.append("accepted (\(image.frameCount) frames) but Chromium shows no complete frame")
            return result
        }
        if image.frameCount != reference.frames.count {
            result.failures.append("frameCount \(image.frameCount), Chromium's complete frames \(reference.frames.count)")
        }
        for (i, frame) in reference.frames.enumerated() where i < image.frameCount {
            if let duration = frame.durationUs, duration != image.timeline.rawDelaysMs[i] * 1000 {
                result.failures.append(
                    "raw delay of frame \(i) is \(image.timeline.rawDelaysMs[i]) ms, Chromium \(duration / 1000) ms")
            }
        }
        if reference.frames.count >= 2 {
            let expected = reference.repetitionCount == "Infinity" ? "infinite" : reference.repetitionCount
            if image.timeline.repetitionCount.description != expected {
                result.failures.append("repetitionCount \(image.timeline.repetitionCount), Chromium \(expected)")
            }
        }
        let renderer = FrameRenderer(image: image)
        for (i, frame) in reference.frames.enumerated() where i < image.frameCount {
            let canvas = try renderer.render(i)
            let expected = try PNGReader.read(contentsOf: frame.png)
            guard expected.width == canvas.width, expected.height == canvas.height else {
                result.failures.append(
                    "frame \(i) is \(canvas.width)×\(canvas.height), Chromium's \(expected.width)×\(expected.height)")
                break
            }
            // Frames Chromium got as YUV (still lossy WebP) were converted by Chromium itself.
            let yuv = ["I420", "I420A", "NV12"].contains(frame.format)
            let comparison = PixelComparison(
                ours: canvas.pixels, reference: expected.pixels, width: canvas.width,
                tolerance: yuv ? 2 : 0, partialTolerance: 1)
            if !comparison.matches {
                result.failures.append("frame \(i): \(comparison.summary)")
            }
        }
        return result
    }
}
