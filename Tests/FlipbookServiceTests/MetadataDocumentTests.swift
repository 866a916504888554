import AnimatedImage
import FlipbookTestSupport
import Foundation
import Testing

@testable import FlipbookService
@testable import ImageStorage

/// The metadata document's JSON (``MetadataDocument``): the field names and values the API
/// promises (openapi.yaml), checked against literal documents built from a file's own facts; a
/// record written before the wire format moved to the service still reads; and reading gives
/// back what was written, for every corpus file and for seeded random documents.
@Suite struct MetadataDocumentTests {
    /// wuffs/muybridge.gif, from its bytes: GIF89a, 9828 bytes, a 30×20 canvas, NETSCAPE2.0 loop
    /// count 0 (forever); 15 image descriptors at (0, 0) 30×20 without a transparent index, each
    /// with a graphic control extension of 10 centiseconds and disposal 1 (leave in place).
    static let muybridgeSHA256 = "5b5650cd1a4b2ff1c969959d565bf5504689a99de2e004797ed39dda57f34f59"
    static let muybridgeFrames = (0..<15).map { i in
        #"{"blend":"over","delayMs":100,"dispose":"none","independent":true,"index":\#(i),"rawDelayMs":100,"#
            + #""rect":{"height":20,"width":30,"x":0,"y":0},"timestampMs":\#(i * 100)}"#
    }.joined(separator: ",")
    static func muybridgeDocument(idField: String) -> String {
        #"{"animated":true,"delayGcdMs":100,"durationMs":1500,"fileBytes":9828,"format":"gif","frameCount":15,"#
            + #""frames":[\#(muybridgeFrames)],"height":20,\#(idField)"mimeType":"image/gif","playCount":0,"#
            + #""repetitionCount":"infinite","truncated":false,"width":30}"#
    }

    static func muybridgeRecord() throws -> StoredImage {
        let image = try AnimatedImage(bytes: Corpus.bytes("wuffs/muybridge.gif"))
        return StoredImage(
            id: "muybridge", sha256: muybridgeSHA256, source: .named,
            storedAt: Date(timeIntervalSince1970: 1_795_000_000), metadata: ImageMetadata(image: image))
    }

    @Test func theMetadataDocumentIsTheFilesFactsUnderTheContractsNames() throws {
        let record = try Self.muybridgeRecord()
        let served = String(decoding: try ImageStore.encodeMetadata(of: record), as: UTF8.self)
        #expect(served == Self.muybridgeDocument(idField: #""id":"muybridge","#))
        // `flipbook info`: the same document without `id`.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let printed = String(decoding: try encoder.encode(MetadataDocument(id: nil, metadata: record.metadata)), as: UTF8.self)
        #expect(printed == Self.muybridgeDocument(idField: ""))
    }

    @Test func anImageListEntryIsTheRecordWithTheHeadlineFields() throws {
        let record = try Self.muybridgeRecord()
        let entry = String(decoding: JSONBody.encode(ImageSummaryDocument(record: record)), as: UTF8.self)
        #expect(
            entry == #"{"animated":true,"durationMs":1500,"fileBytes":9828,"format":"gif","frameCount":15,"#
                + #""height":20,"id":"muybridge","mimeType":"image/gif","playCount":0,"#
                + #""sha256":"\#(Self.muybridgeSHA256)","source":"named","width":30}"#)
    }

    /// A record as the store writes it (`meta/<id>.json`, S3's `names/` and `ids/`), and as it
    /// wrote it before output revisions were recorded: existing data directories and buckets
    /// read unchanged, and are written back identically.
    @Test func aStoredRecordReadsAndIsWrittenBackByteForByte() throws {
        for revision in [nil, 3] as [Int?] {
            let written =
                #"{"id":"muybridge","metadata":\#(Self.muybridgeDocument(idField: #""id":"muybridge","#)),"#
                + (revision.map { #""outputRevision":\#($0),"# } ?? "")
                + #""sha256":"\#(Self.muybridgeSHA256)","source":"named","storedAt":"2026-11-18T11:06:40Z"}"#
            let record = try StoredImage.decode(Array(written.utf8))
            var expected = try Self.muybridgeRecord()
            expected.outputRevision = revision
            #expect(record == expected)
            #expect(String(decoding: try record.encoded(), as: UTF8.self) == written)
        }
    }

    @Test func repetitionCountsAndFrameEnumsAreReadStrictly() throws {
        let document = Self.muybridgeDocument(idField: "")
        func read(_ text: String) throws -> ImageMetadata {
            try JSONDecoder().decode(MetadataDocument.self, from: Data(text.utf8)).metadata
        }
        #expect(try read(document).repetitionCount == .infinite)
        let twice = document.replacingOccurrences(of: #""repetitionCount":"infinite""#, with: #""repetitionCount":2"#)
        #expect(try read(twice).repetitionCount == .count(2))
        for bad in [
            document.replacingOccurrences(of: #""repetitionCount":"infinite""#, with: #""repetitionCount":"forever""#),
            document.replacingOccurrences(of: #""dispose":"none""#, with: #""dispose":"sideways""#),
            document.replacingOccurrences(of: #""blend":"over""#, with: #""blend":"under""#),
            document.replacingOccurrences(of: #""fileBytes":9828,"#, with: ""),
        ] {
            #expect(bad != document)
            #expect(throws: DecodingError.self) { try read(bad) }
        }
    }

    @Test func everyCorpusFilesDocumentReadsBackAsWritten() throws {
        var checked = 0
        for entry in Corpus.entries {
            guard let image = try? AnimatedImage(bytes: Corpus.bytes(entry.path)) else { continue }
            let document = MetadataDocument(id: entry.path, metadata: ImageMetadata(image: image))
            let json = try JSONEncoder().encode(document)
            #expect(try JSONDecoder().decode(MetadataDocument.self, from: json) == document, "\(entry.path)")
            checked += 1
        }
        #expect(checked > 150, "corpus missing at \(Corpus.root.path)")
    }

    /// Any values, not only those an image yields: extreme integers, every repetition count,
    /// strings JSON must escape, documents with and without `id`.
    @Test func seededRandomDocumentsReadBackAsWritten() throws {
        var random = SplitMix64(seed: 14)
        let pieces = ["gif", "\"", "\\", "/", "é", "\u{0}", "\n", "🎞", "image/apng", " "]
        func string() -> String {
            (0..<Int.random(in: 0...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
        }
        func integer() -> Int {
            [Int.min, -1, 0, 1, Int.max, Int(truncatingIfNeeded: random.next())].randomElement(using: &random)!
        }
        let disposals: [FrameDisposal] = [.none, .background, .previous]
        let blends: [FrameBlend] = [.source, .over]
        for _ in 0..<500 {
            let frames = (0..<Int.random(in: 0...5, using: &random)).map { _ in
                ImageMetadata.Frame(
                    index: integer(), delayMs: integer(), rawDelayMs: integer(), timestampMs: integer(),
                    rect: PixelRect(x: integer(), y: integer(), width: integer(), height: integer()),
                    dispose: disposals.randomElement(using: &random)!,
                    blend: blends.randomElement(using: &random)!, independent: Bool.random(using: &random))
            }
            let metadata = ImageMetadata(
                format: string(), mimeType: string(), width: integer(), height: integer(), frameCount: integer(),
                animated: Bool.random(using: &random), playCount: integer(),
                repetitionCount: Bool.random(using: &random) ? .infinite : .count(integer()), durationMs: integer(),
                delayGcdMs: integer(), truncated: Bool.random(using: &random), fileBytes: integer(), frames: frames)
            let document = MetadataDocument(id: Bool.random(using: &random) ? nil : string(), metadata: metadata)
            let json = try JSONEncoder().encode(document)
            #expect(
                try JSONDecoder().decode(MetadataDocument.self, from: json) == document,
                "\(String(decoding: json, as: UTF8.self))")
        }
    }
}
