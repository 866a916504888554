/// Reads the few things Flipbook needs from S3's XML answers — list keys, continuation tokens,
/// upload ids, error codes — without an XML library (FoundationXML would add libxml2 to the
/// runtime image). S3's documents are flat and machine-written: an element's text is what lies
/// between `<Name>` and `</Name>`, with the five predefined entities and numeric references.
enum S3XML {
    /// The text of every `<tag>…</tag>` element, in document order.
    static func values(of tag: String, in body: [UInt8]) -> [String] {
        let text = String(decoding: body, as: UTF8.self)
        let open = "<" + tag + ">"
        let close = "</" + tag + ">"
        var values: [String] = []
        var rest = text[...]
        while let start = rest.firstRange(of: open) {
            let after = rest[start.upperBound...]
            guard let end = after.firstRange(of: close) else { break }
            values.append(unescape(after[..<end.lowerBound]))
            rest = after[end.upperBound...]
        }
        return values
    }

    static func value(of tag: String, in body: [UInt8]) -> String? {
        values(of: tag, in: body).first
    }

    /// The `<Code>` of an `<Error>` document (`NoSuchKey`, `SlowDown`, …), if the body is one.
    static func errorCode(_ body: [UInt8]) -> String? {
        let text = String(decoding: body.prefix(4096), as: UTF8.self)
        guard text.contains("<Error>") else { return nil }
        return value(of: "Code", in: Array(body.prefix(4096)))
    }

    /// `&amp;` `&lt;` `&gt;` `&quot;` `&apos;` and `&#…;` / `&#x…;` decoded.
    static func unescape(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        var out = ""
        var rest = text
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";") else { break }
            let entity = rest[rest.index(after: amp)..<semi]
            switch entity {
            case "amp": out += "&"
            case "lt": out += "<"
            case "gt": out += ">"
            case "quot": out += "\""
            case "apos": out += "'"
            default:
                let number =
                    entity.hasPrefix("#x")
                    ? UInt32(entity.dropFirst(2), radix: 16)
                    : entity.hasPrefix("#") ? UInt32(entity.dropFirst(), radix: 10) : nil
                if let number, let scalar = Unicode.Scalar(number) {
                    out.unicodeScalars.append(scalar)
                } else {
                    out += rest[amp...semi]
                }
            }
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }

    /// Escapes text for an element (the multipart completion document).
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
