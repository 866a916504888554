import FoundationEssentials
import ImageStorage

/// The files of the browser pages and the `<flipbook-player>` component (`ui.dir`, `web/` in
/// the repository), read once at start-up and served from memory: plain HTML, CSS and
/// JavaScript with no build step. Each file has a strong `ETag` from its SHA-256, so browsers
/// revalidate (`Cache-Control: no-cache`) and get a 304 until a new deployment changes it.
///
/// Only regular files directly in the directory are taken, under names of letters, digits,
/// `.`, `_` and `-` with a known extension; nothing is read from disk per request, so a request
/// path can never reach another file.
struct WebAssets: Sendable {
    /// One file, ready to send.
    struct Asset: Sendable {
        var body: [UInt8]
        var contentType: String
        var etag: String
    }

    private(set) var assets: [String: Asset] = [:]

    static let contentTypes: [String: String] = [
        "html": "text/html; charset=utf-8",
        "js": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml",
        "png": "image/png",
        "json": "application/json",
    ]

    init(files: [String: [UInt8]]) {
        for (name, body) in files {
            guard Self.isServableName(name), let type = Self.contentType(of: name) else { continue }
            let digest = ContentHash.sha256Hex(body)
            assets[name] = Asset(body: body, contentType: type, etag: "\"w-\(digest.prefix(32))\"")
        }
    }

    /// Reads every servable file of `directory`; throws when it cannot be listed.
    static func load(directory: String) throws -> WebAssets {
        let manager = FileManager.default
        var files: [String: [UInt8]] = [:]
        for name in try manager.contentsOfDirectory(atPath: directory) where isServableName(name) {
            let path = directory + "/" + name
            var isDirectory = false
            guard manager.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory,
                let data = manager.contents(atPath: path)
            else { continue }
            files[name] = [UInt8](data)
        }
        return WebAssets(files: files)
    }

    subscript(name: String) -> Asset? { assets[name] }

    static func contentType(of name: String) -> String? {
        guard let dot = name.lastIndex(of: ".") else { return nil }
        return contentTypes[String(name[name.index(after: dot)...]).lowercased()]
    }

    static func isServableName(_ name: String) -> Bool {
        guard (1...128).contains(name.utf8.count), !name.hasPrefix(".") else { return false }
        return name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }
}
