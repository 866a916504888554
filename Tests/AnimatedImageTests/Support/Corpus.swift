import Foundation
import Testing

/// The shared conformance corpus (`../shared/corpus` beside the repository, or
/// `$FLIPBOOK_CORPUS`), with Chromium's reference frames.
enum Corpus {
    static let root: URL = {
        if let path = ProcessInfo.processInfo.environment["FLIPBOOK_CORPUS"] {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/corpus")
    }()

    struct Entry: Decodable, Sendable, CustomTestStringConvertible {
        var path: String
        var format: String
        var negative: Bool
        /// The manifest that lists the entry, relative to the corpus root.
        var manifest: String = "manifest.json"
        var testDescription: String { path }

        private enum CodingKeys: String, CodingKey { case path, format, negative }
    }

    /// Every `manifest.json` under the corpus root (the top one and those of sub-corpora such
    /// as `flipbook-cases/`), relative to the root, sorted.
    static let manifests: [String] = {
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
    static let entries: [Entry] = manifests.flatMap { manifest -> [Entry] in
        guard let data = try? Data(contentsOf: root.appendingPathComponent(manifest)),
              let list = try? JSONDecoder().decode([Entry].self, from: data) else { return [] }
        return list.map { var entry = $0; entry.manifest = manifest; return entry }
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: root.appendingPathComponent(path)))
    }

    /// Chromium's view of one input: nil when Chromium rejected the file.
    struct Reference {
        var frameCount: Int
        var repetitionCount: String
        /// Per complete frame: duration in µs (nil for stills), pixel layout, and the PNG path.
        var frames: [(durationUs: Int?, format: String, png: URL)]
    }

    static func reference(_ path: String) throws -> Reference? {
        let dir = root.appendingPathComponent("chromium").appendingPathComponent(path)
        let metaURL = dir.appendingPathComponent("meta.json")
        guard let data = try? Data(contentsOf: metaURL) else { return nil }
        let json = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        let frameList = json["frames"] as? [[String: Any]] ?? []
        var frames: [(Int?, String, URL)] = []
        for (i, frame) in frameList.enumerated() {
            let png = dir.appendingPathComponent(String(format: "frame_%04d.png", i))
            guard FileManager.default.fileExists(atPath: png.path), frame["error"] == nil else { break }
            frames.append(((frame["duration"] as? NSNumber)?.intValue, frame["format"] as? String ?? "", png))
        }
        let repetition = json["repetitionCount"].map { "\($0)" } ?? ""
        return Reference(frameCount: (json["frameCount"] as? NSNumber)?.intValue ?? 0,
                         repetitionCount: repetition, frames: frames)
    }
}
