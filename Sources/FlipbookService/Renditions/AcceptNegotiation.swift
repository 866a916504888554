/// What a request's `Accept` field says of WebP and AVIF (RFC 9110 §12.5.1), read on its bytes without
/// allocating (it is on the hit path of negotiated frames).
///
/// Frames (`format=auto`) take WebP only when `image/webp` is listed itself with a q-value above
/// 0: a wildcard such as `*/*` or `image/*` does not count, so curl and other clients that say
/// `*/*` keep getting PNG. Previews (WebP or AVIF) follow the RFC's precedence: the
/// most specific range that matches `image/webp` decides (`image/webp`, then `image/*`, then
/// `*/*`), and no `Accept` at all accepts anything.
enum AcceptNegotiation {
    /// The highest q-value given to each range that matches `image/webp` (or another image
    /// type); nil where not listed.
    struct WebPRanges: Equatable {
        var exact: Double?
        var image: Double?
        var any: Double?

        /// The q-value of the most specific range listed (RFC 9110's precedence); 0 when none is.
        var effective: Double { exact ?? image ?? any ?? 0 }
    }

    /// For frames: `image/webp` itself with q > 0.
    static func acceptsWebP(_ accept: Substring?) -> Bool {
        guard let accept else { return false }
        return (ranges(accept).exact ?? 0) > 0
    }

    /// For previews: the most specific matching range has q > 0; no field accepts anything.
    static func acceptsWebPOrWildcard(_ accept: Substring?) -> Bool {
        accepts(.webp, accept)
    }

    /// For previews in `format`: the most specific range that matches its media type has q > 0;
    /// no field accepts anything.
    static func accepts(_ format: PreviewFormat, _ accept: Substring?) -> Bool {
        guard let accept else { return true }
        return ranges(accept, of: format).effective > 0
    }

    /// For `format=auto` previews: AVIF when `image/avif` is listed itself with q > 0 and at
    /// least WebP's q (so browsers, which list it, get AVIF, and `*/*` clients keep WebP); else
    /// WebP when its most specific range has q > 0; else AVIF when its has; else nil (406). No
    /// field: WebP.
    static func previewFormat(_ accept: Substring?) -> PreviewFormat? {
        guard let accept else { return .webp }
        let (avif, webp) = (ranges(accept, of: .avif), ranges(accept, of: .webp))
        if let exact = avif.exact, exact > 0, exact >= webp.effective { return .avif }
        if webp.effective > 0 { return .webp }
        return avif.effective > 0 ? .avif : nil
    }

    /// The ranges of the comma-separated list `accept` that match `image/webp` (or, with
    /// `format`, that format's media type: `image/avif`, or `video/mp4` or `video/webm` with `video/*`).
    static func ranges(_ accept: Substring, of format: PreviewFormat = .webp) -> WebPRanges {
        let (mediaType, family): (StaticString, StaticString) =
            switch format {
            case .webp: ("image/webp", "image/*")
            case .avif: ("image/avif", "image/*")
            case .mp4: ("video/mp4", "video/*")
            case .webm: ("video/webm", "video/*")
            }
        var found = WebPRanges()
        let bytes = accept.utf8
        var index = bytes.startIndex
        while index < bytes.endIndex {
            // One element: `type/subtype *( OWS ";" OWS name=value )`, up to the next comma.
            let end = bytes[index...].firstIndex(of: comma) ?? bytes.endIndex
            var parts = bytes[index..<end].split(separator: semicolon, omittingEmptySubsequences: false)[...]
            index = end < bytes.endIndex ? bytes.index(after: end) : end
            guard let type = parts.popFirst().map(trimmed) else { continue }
            let kind: WritableKeyPath<WebPRanges, Double?>
            if equalsIgnoringCase(type, mediaType) {
                kind = \.exact
            } else if equalsIgnoringCase(type, family) {
                kind = \.image
            } else if equalsIgnoringCase(type, "*/*") {
                kind = \.any
            } else {
                continue
            }
            var q = 1.0
            for parameter in parts {
                guard let equals = parameter.firstIndex(of: UInt8(ascii: "=")),
                    equalsIgnoringCase(trimmed(parameter[..<equals]), "q")
                else { continue }
                q = qValue(Substring(trimmed(parameter[parameter.index(after: equals)...]))) ?? 1
            }
            found[keyPath: kind] = max(found[keyPath: kind] ?? 0, q)
        }
        return found
    }

    /// A q-value, `0`…`1` with at most three decimals; nil when malformed.
    static func qValue(_ text: Substring) -> Double? {
        guard text.utf8.count <= 5, let value = Double(text), value >= 0, value <= 1 else { return nil }
        return value
    }

    private static let comma = UInt8(ascii: ",")
    private static let semicolon = UInt8(ascii: ";")

    private static func trimmed(_ text: Substring.UTF8View.SubSequence) -> Substring.UTF8View.SubSequence {
        var text = text
        while let first = text.first, first == 0x20 || first == 0x09 { text.removeFirst() }
        while let last = text.last, last == 0x20 || last == 0x09 { text.removeLast() }
        return text
    }

    private static func equalsIgnoringCase(_ text: Substring.UTF8View.SubSequence, _ lowercased: StaticString) -> Bool {
        guard text.count == lowercased.utf8CodeUnitCount else { return false }
        var offset = 0
        for byte in text {
            let lower = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
            if lower != lowercased.utf8Start[offset] { return false }
            offset += 1
        }
        return true
    }
}
