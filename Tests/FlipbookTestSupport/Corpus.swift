import Foundation

/// The shared conformance corpus (`../shared/corpus` beside the repository, or
/// `$FLIPBOOK_CORPUS`): its manifests, inputs and Chromium's reference frames, for every test
/// target that reads real files.
public enum Corpus {
    public static let root: URL = {
        if let path = ProcessInfo.processInfo.environment["FLIPBOOK_CORPUS"] {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus")
    }()

    /// One input a manifest lists.
    public struct Entry: Decodable, Sendable {
        public var path: String
        public var format: String
        public var negative: Bool
        /// The manifest that lists the entry, relative to the corpus root.
        public var manifest: String = "manifest.json"

        private enum CodingKeys: String, CodingKey { case path, format, negative }
    }

    /// Every `manifest.json` under the corpus root (the top one and those of sub-corpora such
    /// as `flipbook-cases/`), relative to the root, shallowest first.
    public static let manifests: [String] = {
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        var found: [String] = []
        while let path = walker.nextObject() as? String {
            // Chromium's reference directories hold meta.json files, never manifests.
            if path == "chromium" { walker.skipDescendants(); continue }
            if (path as NSString).lastPathComponent == "manifest.json" { found.append(path) }
        }
        return found.sorted { ($0.filter { $0 == "/" }.count, $0) < ($1.filter { $0 == "/" }.count, $1) }
    }()

    /// Every input of every manifest (paths are relative to the corpus root); empty when the
    /// corpus is missing (a test checks that).
    public static let entries: [Entry] = manifests.flatMap { manifest -> [Entry] in
        guard let data = try? Data(contentsOf: root.appendingPathComponent(manifest)),
            let list = try? JSONDecoder().decode([Entry].self, from: data)
        else { return [] }
        return list.map {
            var entry = $0; entry.manifest = manifest; return entry
        }
    }

    /// The bytes of the input at `path` (relative to the corpus root).
    public static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: root.appendingPathComponent(path)))
    }

    /// A reference directory with neither Chromium's frames (`meta.json`) nor its refusal
    /// (`error.txt`): a broken corpus, never a rejection.
    public struct MissingReference: Error, CustomStringConvertible {
        public var directory: String
        public var description: String { "no Chromium reference for \(directory): neither meta.json nor error.txt" }
    }

    /// Chromium's view of one input.
    public struct Reference {
        /// `repetitionCount` as Chromium's meta.json spells it (a number, or "Infinity").
        public var repetitionCount: String
        /// Per complete frame: duration in µs (nil for stills), pixel layout, size (the canvas's),
        /// and the PNG path.
        public var frames: [(durationUs: Int?, format: String, width: Int, height: Int, png: URL)]
    }

    /// Chromium's reference for `path`: nil when Chromium rejected the file (its reference
    /// directory holds `error.txt`); throws ``MissingReference`` when it holds neither file.
    public static func reference(_ path: String, in corpus: URL = root) throws -> Reference? {
        let dir = corpus.appendingPathComponent("chromium").appendingPathComponent(path)
        let metaURL = dir.appendingPathComponent("meta.json")
        guard FileManager.default.fileExists(atPath: metaURL.path) else {
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent("error.txt").path) { return nil }
            throw MissingReference(directory: "chromium/" + path)
        }
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: metaURL)) as! [String: Any]
        let frameList = json["frames"] as? [[String: Any]] ?? []
        var frames: [(Int?, String, Int, Int, URL)] = []
        for (i, frame) in frameList.enumerated() {
            let png = dir.appendingPathComponent(String(format: "frame_%04d.png", i))
            guard FileManager.default.fileExists(atPath: png.path), frame["error"] == nil else { break }
            frames.append(
                (
                    (frame["duration"] as? NSNumber)?.intValue, frame["format"] as? String ?? "",
                    (frame["width"] as? NSNumber)?.intValue ?? 0, (frame["height"] as? NSNumber)?.intValue ?? 0, png
                ))
        }
        let repetition = json["repetitionCount"].map { "\($0)" } ?? ""
        return Reference(repetitionCount: repetition, frames: frames)
    }
}
