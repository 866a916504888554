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
///
/// The pages share one `<head>`: a line `<!--#include _head.html-->` in an `.html` file is
/// replaced by that file. A name beginning with `_` is such a fragment: included, never served.
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

    /// A page includes a fragment that is not there.
    struct MissingFragment: Error, CustomStringConvertible {
        var page: String
        var fragment: String
        var description: String { "\(page) includes \(fragment), which is not in the directory" }
    }

    init(files: [String: [UInt8]]) throws(MissingFragment) {
        for (name, file) in files where !Self.isFragmentName(name) {
            guard Self.isServableName(name), let type = Self.contentType(of: name) else { continue }
            let body = name.hasSuffix(".html") ? try Self.includingFragments(of: name, file, from: files) : file
            let digest = ContentHash.sha256Hex(body)
            assets[name] = Asset(body: body, contentType: type, etag: "\"w-\(digest.prefix(32))\"")
        }
    }

    /// `page` with each line that is only `<!--#include NAME-->` (NAME a fragment of `files`)
    /// replaced by that fragment.
    static func includingFragments(
        of name: String, _ page: [UInt8], from files: [String: [UInt8]]
    ) throws(MissingFragment) -> [UInt8] {
        var lines: [String] = []
        for line in String(decoding: page, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            let directive = line.drop(while: { $0 == " " })
            guard directive.hasPrefix("<!--#include "), directive.hasSuffix("-->") else {
                lines.append(String(line))
                continue
            }
            let fragment = String(directive.dropFirst("<!--#include ".count).dropLast("-->".count))
            guard isFragmentName(fragment), let included = files[fragment] else {
                throw MissingFragment(page: name, fragment: fragment)
            }
            var text = String(decoding: included, as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            lines.append(text)
        }
        return Array(lines.joined(separator: "\n").utf8)
    }

    /// Reads every servable file and fragment of `directory`; throws when it cannot be listed
    /// or a page includes a fragment that is not there.
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
        return try WebAssets(files: files)
    }

    subscript(name: String) -> Asset? { assets[name] }

    static func contentType(of name: String) -> String? {
        guard let dot = name.lastIndex(of: ".") else { return nil }
        return contentTypes[String(name[name.index(after: dot)...]).lowercased()]
    }

    /// A fragment of pages (`_head.html`), never served itself.
    static func isFragmentName(_ name: String) -> Bool {
        name.hasPrefix("_") && isServableName(name)
    }

    static func isServableName(_ name: String) -> Bool {
        guard (1...128).contains(name.utf8.count), !name.hasPrefix(".") else { return false }
        return name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }
}
