// Parser-core file: compiles standalone (stdlib only) for the fuzz target.

/// Validation, splitting and percent-decoding of request targets (RFC 9112 §3.2, RFC 3986 §2.1).
enum RequestTarget {
    /// Whether `bytes` is an acceptable target for `method`: origin-form (`/…`), absolute-form
    /// (`http://…` or `https://…`), or asterisk-form (`*`, OPTIONS only); visible ASCII only, every
    /// `%` followed by two hex digits.
    static func isValid(_ bytes: UnsafeRawBufferPointer, method: HTTPMethod) -> Bool {
        guard let first = bytes.first else { return false }
        if first == 0x2A { return bytes.count == 1 && method == .OPTIONS }
        if first != 0x2F && absolutePathStart(bytes) == nil { return false }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte > 0x20, byte < 0x7F else { return false }
            if byte == 0x25 {
                guard index + 2 < bytes.count,
                      ASCII.hexValue(bytes[index + 1]) != nil, ASCII.hexValue(bytes[index + 2]) != nil
                else { return false }
                index += 3
                continue
            }
            index += 1
        }
        return true
    }

    /// For an absolute-form target, the offset where its path (or query) starts; `count` if it has
    /// neither. Nil when `bytes` is not `http://authority…` or `https://authority…`.
    static func absolutePathStart(_ bytes: UnsafeRawBufferPointer) -> Int? {
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
    static func split(_ target: String) -> (path: Substring, query: Substring?) {
        // Scans UTF-8 code units (String.Index values from the UTF-8 view are valid for slicing),
        // avoiding Character iteration on the hot path.
        let utf8 = target.utf8
        var end = utf8.endIndex
        var question: String.Index?
        var index = utf8.startIndex
        while index != end {
            let byte = utf8[index]
            if byte == 0x23 { end = index; break } // '#'
            if byte == 0x3F && question == nil { question = index } // '?'
            index = utf8.index(after: index)
        }
        var start = utf8.startIndex
        if let first = utf8.first, first != 0x2F, !(first == 0x2A && utf8.count == 1) {
            let prefixEnd = question ?? end
            let absolute = target[start..<prefixEnd]
            let offset = Array(absolute.utf8).withUnsafeBytes { absolutePathStart($0) }
            if let offset {
                start = utf8.index(start, offsetBy: offset)
            }
        }
        let path = target[start..<(question ?? end)]
        let query = question.map { target[utf8.index(after: $0)..<end] }
        return (path.isEmpty ? "/" : path, query)
    }

    /// Percent-decodes `text`; with `plusAsSpace`, `+` decodes to a space (query strings).
    /// Malformed escapes are kept literally. Invalid UTF-8 becomes U+FFFD.
    static func percentDecode(_ text: Substring, plusAsSpace: Bool = false) -> String {
        let utf8 = text.utf8
        if !utf8.contains(0x25) && !(plusAsSpace && utf8.contains(0x2B)) { return String(text) }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == 0x25 {
                let first = utf8.index(after: index)
                if first != utf8.endIndex {
                    let second = utf8.index(after: first)
                    if second != utf8.endIndex, let high = ASCII.hexValue(utf8[first]),
                       let low = ASCII.hexValue(utf8[second]) {
                        out.append(UInt8(high << 4 | low))
                        index = utf8.index(after: second)
                        continue
                    }
                }
                out.append(byte)
            } else if byte == 0x2B && plusAsSpace {
                out.append(0x20)
            } else {
                out.append(byte)
            }
            index = utf8.index(after: index)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decoded `name=value` pairs of a query string, in order, duplicates kept; a pair without `=`
    /// has an empty value; empty pairs (`a=1&&b=2`) are skipped.
    static func queryItems(_ query: Substring) -> [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            if let equals = pair.firstIndex(of: "=") {
                items.append((percentDecode(pair[..<equals], plusAsSpace: true),
                              percentDecode(pair[pair.index(after: equals)...], plusAsSpace: true)))
            } else {
                items.append((percentDecode(pair, plusAsSpace: true), ""))
            }
        }
        return items
    }
}
