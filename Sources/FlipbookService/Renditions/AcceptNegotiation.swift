/// Whether a request's `Accept` field lets it have WebP: it lists `image/webp` itself (a wildcard
/// such as `*/*` or `image/*` does not count, so curl and other clients that say `*/*` keep
/// getting PNG) with a q-value above 0 (RFC 9110 §12.5.1; `q=0` means "not acceptable").
enum AcceptNegotiation {
    static func acceptsWebP(_ accept: Substring?) -> Bool {
        guard let accept else { return false }
        var best: Double? = nil
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";")
            guard let type = parts.first, type.trimmed().lowercased() == "image/webp" else { continue }
            var q = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmed().lowercased() == "q" else { continue }
                q = qValue(pair[1].trimmed()) ?? 1
            }
            best = max(best ?? 0, q)
        }
        return (best ?? 0) > 0
    }

    /// A q-value, `0`…`1` with at most three decimals; nil when malformed.
    static func qValue(_ text: Substring) -> Double? {
        guard text.utf8.count <= 5, let value = Double(text), value >= 0, value <= 1 else { return nil }
        return value
    }
}

extension Substring {
    fileprivate func trimmed() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
