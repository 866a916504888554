import Glibc
import HTTPParsing

/// `If-None-Match` (RFC 9110 §13.1.2) evaluated on the header bytes, without allocating: what a
/// revalidation on the hot path (a player polling with its cached ETag) needs.
extension HTTPHeaders {
    /// Whether an `If-None-Match` field names `etag` — or is `*` — by weak comparison (a `W/`
    /// prefix on either side is ignored). False when there is no such field.
    public func ifNoneMatchMatches(_ etag: String) -> Bool {
        // The parser noted the first such field (``ifNoneMatchIndex``): without one there is
        // nothing to compare, and with one no name before it is read, nor its own.
        let noted = ifNoneMatchIndex != Self.unnotedIndex
        let first = noted ? Int(ifNoneMatchIndex) : 0
        guard first >= 0 else { return false }
        // The tag's own bytes when the string has them in one piece (a native string: no copy of
        // it, so no retain and release); else a copy made contiguous.
        if let found = etag.utf8.withContiguousStorageIfAvailable({
            fieldsName(UnsafeRawBufferPointer($0), from: first, noted: noted)
        }) {
            return found
        }
        var target = etag
        return target.withUTF8 { fieldsName(UnsafeRawBufferPointer($0), from: first, noted: noted) }
    }

    /// ``ifNoneMatchMatches(_:)`` for an entity-tag given as its UTF-8 bytes (a caller that keeps
    /// them reads them without the retain and release a `String` property costs).
    public func ifNoneMatchMatches(utf8 etag: UnsafeRawBufferPointer) -> Bool {
        let noted = ifNoneMatchIndex != Self.unnotedIndex
        let first = noted ? Int(ifNoneMatchIndex) : 0
        guard first >= 0 else { return false }
        return fieldsName(etag, from: first, noted: noted)
    }

    /// Whether an `If-None-Match` field from index `first` on (that one the first such field
    /// when `noted`) names the entity-tag `etag`'s bytes.
    private func fieldsName(_ etag: UnsafeRawBufferPointer, from first: Int, noted: Bool) -> Bool {
        var tag = etag
        if tag.count >= 2 && tag[0] == 0x57 && tag[1] == 0x2F { tag = UnsafeRawBufferPointer(rebasing: tag[2...]) }
        return storage.withUnsafeBytes { buffer in
            for index in first..<fields.count {
                let field = fields[index]
                if !noted || index != first {
                    // The noted field's name is known; any later one's is read.
                    let name = UnsafeRawBufferPointer(rebasing: buffer[Int(field.nameStart)..<Int(field.nameEnd)])
                    guard HTTPRequestParser.nameIs(name, "if-none-match") else { continue }
                }
                let value = UnsafeRawBufferPointer(rebasing: buffer[Int(field.valueStart)..<Int(field.valueEnd)])
                if Self.listNames(tag, value) { return true }
            }
            return false
        }
    }

    /// Whether the entity-tag list `value` (`"a", W/"b"` or `*`) holds `tag` (opaque tag with
    /// its quotes, no `W/`).
    static func listNames(_ tag: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool {
        // The usual field is the one tag the client was given, perhaps marked weak: compared
        // whole. An opaque tag holds no quote but its two ends, so a value equal to it is the
        // one-element list naming it.
        let prefix = value.count - tag.count
        if tag.count > 0 && (prefix == 0 || (prefix == 2 && value[0] == 0x57 && value[1] == 0x2F))
            && memcmp(value.baseAddress! + prefix, tag.baseAddress!, tag.count) == 0
        {
            return true
        }
        var i = 0
        let end = value.count
        while i < end {
            let byte = value[i]
            if byte == 0x20 || byte == 0x09 || byte == 0x2C { i += 1; continue }
            if byte == 0x2A { return true }  // *
            if byte == 0x57 && i + 1 < end && value[i + 1] == 0x2F { i += 2 }  // W/
            guard i < end, value[i] == 0x22 else {
                // Not an entity-tag: skip to the next list element.
                while i < end && value[i] != 0x2C { i += 1 }
                continue
            }
            guard let close = ByteSearch.firstOffset(of: 0x22, in: value, range: (i + 1)..<end) else { return false }
            if close + 1 - i == tag.count && memcmp(value.baseAddress! + i, tag.baseAddress!, tag.count) == 0 { return true }
            i = close + 1
        }
        return false
    }
}
