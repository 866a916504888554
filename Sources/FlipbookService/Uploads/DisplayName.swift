import SystemResources

/// The file name an upload carries in `Content-Disposition` (RFC 6266: `filename`, and
/// `filename*` in RFC 8187's `UTF-8''…` form, which wins), made a display name: the last path
/// segment only, control characters dropped, whitespace trimmed, at most ``maxCharacters``
/// characters. Never used as a path or an id; shown beside the id in metadata, listings and pages.
enum DisplayName {
    static let maxCharacters = 128

    /// The display name of `header` (a `Content-Disposition` value), or nil when it names none.
    static func from(contentDisposition header: String?) -> String? {
        guard let header else { return nil }
        var plain: String?
        var extended: String?
        for (name, value) in parameters(header) {
            switch name {
            case "filename": plain = value
            case "filename*": extended = decodeExtended(value)
            default: break
            }
        }
        return (extended ?? plain).flatMap(sanitise)
    }

    /// `name=value` pairs after the disposition type; quoted strings unescaped.
    static func parameters(_ header: String) -> [(String, String)] {
        var result: [(String, String)] = []
        let scalars = Array(header.unicodeScalars)
        var i = scalars.firstIndex(of: ";") ?? scalars.count
        while i < scalars.count {
            i += 1  // past ';'
            while i < scalars.count, scalars[i] == " " || scalars[i] == "\t" { i += 1 }
            var name = ""
            while i < scalars.count, scalars[i] != "=", scalars[i] != ";" {
                name.unicodeScalars.append(scalars[i])
                i += 1
            }
            guard i < scalars.count, scalars[i] == "=" else { continue }
            i += 1
            var value = ""
            if i < scalars.count, scalars[i] == "\"" {
                i += 1
                while i < scalars.count, scalars[i] != "\"" {
                    if scalars[i] == "\\", i + 1 < scalars.count { i += 1 }
                    value.unicodeScalars.append(scalars[i])
                    i += 1
                }
                while i < scalars.count, scalars[i] != ";" { i += 1 }
            } else {
                while i < scalars.count, scalars[i] != ";" {
                    value.unicodeScalars.append(scalars[i])
                    i += 1
                }
                value = value.trimmingSpaces()
            }
            result.append((name.trimmingSpaces().lowercased(), value))
        }
        return result
    }

    /// RFC 8187: `UTF-8'lang'percent-encoded` (UTF-8 only; other charsets are ignored).
    static func decodeExtended(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].lowercased() == "utf-8" else { return nil }
        return strictPercentDecoding(parts[2])
    }

    /// `text` with every `%XX` decoded, or nil when a `%` is not followed by two hex digits or the
    /// bytes are not UTF-8.
    static func strictPercentDecoding(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var rest = text.utf8[...]
        while let byte = rest.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard rest.count >= 2, let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16)
            else { return nil }
            bytes.append(value)
            rest = rest.dropFirst(2)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The last path segment, without control characters, trimmed and bounded; nil when empty.
    static func sanitise(_ name: String) -> String? {
        let segment = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        let kept = String(
            String.UnicodeScalarView(
                segment.unicodeScalars.filter {
                    !$0.properties.isDefaultIgnorableCodePoint && $0.properties.generalCategory != .control
                        && $0.properties.generalCategory != .format
                }))
        let trimmed = kept.trimmingWhitespace()
        guard !trimmed.isEmpty, trimmed != ".", trimmed != ".." else { return nil }
        return String(trimmed.prefix(maxCharacters))
    }
}
