/// Validation, splitting and percent-decoding of request targets (RFC 9112 §3.2, RFC 3986 §2.1).
package enum RequestTarget {
    /// Whether `bytes` is an acceptable target for `method`: origin-form (`/…`), absolute-form
    /// (`http://…` or `https://…`), or asterisk-form (`*`, OPTIONS only); visible ASCII only, every
    /// `%` followed by two hex digits.
    package static func isValid(_ bytes: UnsafeRawBufferPointer, method: HTTPMethod) -> Bool {
        validated(bytes, method: method) != nil
    }

    /// ``isValid(_:method:)`` and, for a valid target, the offset of its first `%` (`bytes.count`
    /// when it has none: its path needs no decoding, ``RawTarget/pathIsPlain``); nil when invalid.
    package static func validated(_ bytes: UnsafeRawBufferPointer, method: HTTPMethod) -> Int? {
        guard let first = bytes.first else { return nil }
        if first == 0x2A { return bytes.count == 1 && method == .OPTIONS ? bytes.count : nil }
        if first != 0x2F && absolutePathStart(bytes) == nil { return nil }
        if ByteSearch.containsNonVisibleASCII(bytes) { return nil }
        guard let firstPercent = ByteSearch.firstOffset(of: 0x25, in: bytes) else { return bytes.count }
        // Every `%` followed by two hex digits.
        var index = firstPercent
        while index < bytes.count {
            let byte = bytes[index]
            guard byte > 0x20, byte < 0x7F else { return nil }
            if byte == 0x25 {
                guard index + 2 < bytes.count,
                    ASCII.hexValue(bytes[index + 1]) != nil, ASCII.hexValue(bytes[index + 2]) != nil
                else { return nil }
                index += 3
                continue
            }
            index += 1
        }
        return firstPercent
    }

    /// For an absolute-form target, the offset where its path (or query) starts; `count` if it has
    /// neither. Nil when `bytes` is not `http://authority…` or `https://authority…`.
    package static func absolutePathStart(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let prefixLength: Int
        if hasPrefix(bytes, "http://") {
            prefixLength = 7
        } else if hasPrefix(bytes, "https://") {
            prefixLength = 8
        } else {
            return nil
        }
        guard bytes.count > prefixLength else { return nil }
        var index = prefixLength
        while index < bytes.count, bytes[index] != 0x2F, bytes[index] != 0x3F { index += 1 }
        return index == prefixLength ? nil : index
    }

    private static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        let count = lowercase.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        return HTTPRequestParser.nameIs(UnsafeRawBufferPointer(rebasing: bytes[0..<count]), lowercase)
    }

    /// Splits a target into its raw path (always starting with `/`, or `*`) and raw query (after `?`,
    /// without any `#fragment`).
    package static func split(_ target: String) -> (path: Substring, query: Substring?) {
        // Scans the UTF-8 bytes in place; offsets become indices of the UTF-8 view (valid for
        // slicing), without Character iteration.
        var text = target
        let parts = text.withUTF8 { Self.parts(of: UnsafeRawBufferPointer($0)) }
        let utf8 = target.utf8
        func at(_ offset: Int) -> String.Index { utf8.index(utf8.startIndex, offsetBy: offset) }
        let path = target[at(parts.path.lowerBound)..<at(parts.path.upperBound)]
        let query = parts.query.map { target[at($0.lowerBound)..<at($0.upperBound)] }
        return (path.isEmpty ? "/" : path, query)
    }

    /// The offsets of a target's raw path (empty only for an absolute-form target without one)
    /// and raw query (after `?`, without any `#fragment`; nil without a `?`).
    package static func parts(of bytes: UnsafeRawBufferPointer) -> (path: Range<Int>, query: Range<Int>?) {
        let end = ByteSearch.firstOffset(of: 0x23, in: bytes) ?? bytes.count  // '#'
        let question = ByteSearch.firstOffset(of: 0x3F, in: bytes, range: 0..<end)  // '?'
        var pathStart = 0
        if let first = bytes.first, first != 0x2F, !(first == 0x2A && bytes.count == 1) {
            let prefix = UnsafeRawBufferPointer(rebasing: bytes[0..<(question ?? end)])
            pathStart = absolutePathStart(prefix) ?? 0
        }
        return (pathStart..<(question ?? end), question.map { ($0 + 1)..<end })
    }

    /// Percent-decodes `text`; with `plusAsSpace`, `+` decodes to a space (query strings).
    /// Malformed escapes are kept literally. Invalid UTF-8 becomes U+FFFD.
    package static func percentDecode(_ text: Substring, plusAsSpace: Bool = false) -> String {
        var copy = text
        let plain = copy.withUTF8 { !needsDecoding(UnsafeRawBufferPointer($0), plusAsSpace: plusAsSpace) }
        // Nothing to decode: a copy of the (already valid) text, without validating it again.
        if plain { return String(text) }
        return copy.withUTF8 { percentDecode(UnsafeRawBufferPointer($0), plusAsSpace: plusAsSpace) }
    }

    /// Percent-decodes UTF-8 `bytes` (see ``percentDecode(_:plusAsSpace:)``).
    package static func percentDecode(_ bytes: UnsafeRawBufferPointer, plusAsSpace: Bool = false) -> String {
        if !needsDecoding(bytes, plusAsSpace: plusAsSpace) { return String(decoding: bytes, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x25, index + 2 < bytes.count, let high = ASCII.hexValue(bytes[index + 1]),
                let low = ASCII.hexValue(bytes[index + 2])
            {
                out.append(UInt8(high << 4 | low))
                index += 3
                continue
            }
            out.append(byte == 0x2B && plusAsSpace ? 0x20 : byte)
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `bytes` has a `%` (or, with `plusAsSpace`, a `+`).
    private static func needsDecoding(_ bytes: UnsafeRawBufferPointer, plusAsSpace: Bool) -> Bool {
        ByteSearch.firstOffset(of: 0x25, in: bytes) != nil
            || (plusAsSpace && ByteSearch.firstOffset(of: 0x2B, in: bytes) != nil)
    }

    /// Decoded `name=value` pairs of a query string, in order, duplicates kept; a pair without `=`
    /// has an empty value; empty pairs (`a=1&&b=2`) are skipped. Split on its UTF-8 bytes (`&` and
    /// `=` are ASCII, so every piece is whole characters): splitting the Substring by Characters
    /// cost about 37,000 instructions for a three-parameter query, more than the rest of a cached
    /// frame's request.
    package static func queryItems(_ query: Substring) -> [(name: String, value: String)] {
        var text = query
        return text.withUTF8 { queryItems(UnsafeRawBufferPointer($0)) }
    }

    /// The items of a query given as its UTF-8 bytes (as for a `Substring`, above).
    package static func queryItems(_ bytes: UnsafeRawBufferPointer) -> [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        var start = 0
        while start <= bytes.count {
            var end = start
            var equals: Int? = nil
            while end < bytes.count && bytes[end] != 0x26 {
                if equals == nil && bytes[end] == 0x3D { equals = end }
                end += 1
            }
            if end > start {
                let nameEnd = equals ?? end
                let name = percentDecode(UnsafeRawBufferPointer(rebasing: bytes[start..<nameEnd]), plusAsSpace: true)
                let value =
                    equals.map {
                        percentDecode(UnsafeRawBufferPointer(rebasing: bytes[($0 + 1)..<end]), plusAsSpace: true)
                    } ?? ""
                items.append((name, value))
            }
            start = end + 1
        }
        return items
    }
}
