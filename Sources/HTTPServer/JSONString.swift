import HTTPParsing

/// The one JSON string escaper, for everything Flipbook writes as JSON by hand (problem details,
/// the JSON log handler, the access log): `"` and `\` escaped, control characters and DEL as
/// `\n`, `\r`, `\t` or `\u00XX`; everything else (UTF-8 included) as it is (RFC 8259 §7).
public enum JSONString {
    /// The most bytes escaping one byte can take (`\u00XX`).
    public static let maximumEscapedBytesPerByte = 6

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
        let rest = UnsafeRawBufferPointer(rebasing: bytes[clean...])
        withUnsafeTemporaryAllocation(byteCount: rest.count * maximumEscapedBytesPerByte, alignment: 1) { room in
            let written = writeEscaped(rest, to: room.baseAddress!)
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: room[0..<written]))
        }
    }

    /// Writes the UTF-8 `bytes` escaped for the inside of a JSON string (no quotes) at `out`,
    /// which has room for ``maximumEscapedBytesPerByte`` × `bytes.count` bytes; returns the number
    /// of bytes written.
    public static func writeEscaped(_ bytes: UnsafeRawBufferPointer, to out: UnsafeMutableRawPointer) -> Int {
        let clean = ByteSearch.firstJSONEscape(in: bytes) ?? bytes.count
        if clean > 0 { out.copyMemory(from: bytes.baseAddress!, byteCount: clean) }
        var written = clean
        guard clean < bytes.count else { return written }
        for byte in bytes[clean...] {
            let escape: UInt8
            switch byte {
            case 0x22: escape = 0x22
            case 0x5C: escape = 0x5C
            case 0x0A: escape = 0x6E
            case 0x0D: escape = 0x72
            case 0x09: escape = 0x74
            case 0..<0x20, 0x7F:
                // \u00XX
                out.storeBytes(of: 0x5C, toByteOffset: written, as: UInt8.self)
                out.storeBytes(of: 0x75, toByteOffset: written + 1, as: UInt8.self)
                out.storeBytes(of: 0x30, toByteOffset: written + 2, as: UInt8.self)
                out.storeBytes(of: 0x30, toByteOffset: written + 3, as: UInt8.self)
                out.storeBytes(of: hexDigit(byte >> 4), toByteOffset: written + 4, as: UInt8.self)
                out.storeBytes(of: hexDigit(byte & 0xF), toByteOffset: written + 5, as: UInt8.self)
                written += 6
                continue
            default:
                out.storeBytes(of: byte, toByteOffset: written, as: UInt8.self)
                written += 1
                continue
            }
            out.storeBytes(of: 0x5C, toByteOffset: written, as: UInt8.self)
            out.storeBytes(of: escape, toByteOffset: written + 1, as: UInt8.self)
            written += 2
        }
        return written
    }

    /// The lowercase hex digit of `nibble` (0–15).
    @inline(__always)
    public static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 + nibble : 0x57 + nibble
    }
}
