import HTTPParsing

/// The one JSON string escaper, for everything Flipbook writes as JSON by hand (problem details,
/// the JSON log handler, the access log): `"` and `\` escaped, control characters and DEL as
/// `\n`, `\r`, `\t` or `\u00XX`; everything else (UTF-8 included) as it is (RFC 8259 §7).
public enum JSONString {
    /// `text` as a JSON string literal, quotes included.
    public static func quoted(_ text: String) -> String {
        var out: [UInt8] = [0x22]
        var text = text
        text.withUTF8 { appendEscaped(UnsafeRawBufferPointer($0), to: &out) }
        out.append(0x22)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the UTF-8 `bytes` escaped for the inside of a JSON string (no quotes).
    public static func appendEscaped(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        // Most values need no escape: copy the clean prefix (found eight bytes at a time) in one go.
        let clean = ByteSearch.firstJSONEscape(in: bytes) ?? bytes.count
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<clean]))
        guard clean < bytes.count else { return }
        for byte in bytes[clean...] {
            switch byte {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: out.append(contentsOf: [0x5C, 0x72])
            case 0x09: out.append(contentsOf: [0x5C, 0x74])
            case 0..<0x20, 0x7F:
                out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
