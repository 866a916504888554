/// What a request gets from a representation that supports byte ranges (RFC 9110 §14): the whole
/// of it (200), one part (206 with `Content-Range: bytes first-last/length`), or nothing (416 with
/// `Content-Range: bytes */length`).
public enum ByteRangeAnswer: Sendable, Equatable {
    /// The whole representation, with 200: no `Range`, a method other than GET, a `Range` that
    /// is ignored (not `bytes`, not parsable, more than one range, given twice), or an
    /// `If-Range` that does not hold.
    case whole
    /// The bytes at these offsets, with 206.
    case part(Range<Int>)
    /// No byte the `Range` names exists: 416.
    case unsatisfiable
}

/// The `Range` and `If-Range` request fields (RFC 9110 §13.1.5, §14.1, §14.2), evaluated against
/// a representation of known length and strong validator. A request with several ranges is
/// answered with the whole representation, as RFC 9110 allows (and nginx does): a
/// `multipart/byteranges` body is never made. Standard library only, so the fuzz target builds
/// from it as it is.
public enum ByteRanges {
    /// How a request with `method` and `headers` is answered from `length` bytes whose strong
    /// entity tag is `etag` (with its quotes). `If-None-Match` is the caller's to evaluate first
    /// (RFC 9110 §13.2.2: a 304 comes before any range).
    public static func answer(method: HTTPMethod, headers: HTTPHeaders, length: Int, etag: String) -> ByteRangeAnswer {
        // Range is defined for GET only; HEAD and others ignore it (§14.2).
        guard method == .GET else { return .whole }
        let ranges = headers.values(for: "Range")
        guard ranges.count == 1 else { return .whole }
        let conditions = headers.values(for: "If-Range")
        if !conditions.isEmpty {
            guard conditions.count == 1, ifRangeHolds(conditions[0], etag: etag) else { return .whole }
        }
        return answer(range: ranges[0], length: length)
    }

    /// Whether an `If-Range` value lets the range be sent: only an entity tag that is strong and
    /// equal to `etag` does. A date never does (these representations send no `Last-Modified`),
    /// nor a weak tag (§13.1.5 asks for the strong comparison).
    public static func ifRangeHolds(_ value: String, etag: String) -> Bool {
        trimmed(Substring(value)) == Substring(etag) && etag.hasPrefix("\"")
    }

    /// The answer to a `Range` value on `length` bytes, `If-Range` aside.
    public static func answer(range value: String, length: Int) -> ByteRangeAnswer {
        guard let equals = value.firstIndex(of: "=") else { return .whole }
        let unit = value[..<equals]
        guard unit.count == 5, unit.lowercased() == "bytes" else { return .whole }
        var specs: [Substring] = []
        for element in value[value.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false) {
            let spec = trimmed(element)
            if !spec.isEmpty { specs.append(spec) }  // a list may have empty elements (§5.6.1.2)
        }
        guard specs.count == 1, let spec = RangeSpec(specs[0]) else { return .whole }
        return spec.resolved(length: length)
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}

/// One `range-spec`: `first-` , `first-last` or `-suffix` (RFC 9110 §14.1.1).
private enum RangeSpec {
    case from(Int, through: Int?)
    case suffix(Int)

    /// Parses a spec; nil when it is not one (then the whole `Range` is ignored), including
    /// `last < first`, which §14.1.1 calls invalid.
    init?(_ text: Substring) {
        guard let dash = text.firstIndex(of: "-") else { return nil }
        let before = text[..<dash]
        let after = text[text.index(after: dash)...]
        if before.isEmpty {
            guard let suffix = Self.number(after) else { return nil }
            self = .suffix(suffix)
            return
        }
        guard let first = Self.number(before) else { return nil }
        if after.isEmpty {
            self = .from(first, through: nil)
            return
        }
        guard let last = Self.number(after), last >= first else { return nil }
        self = .from(first, through: last)
    }

    /// The bytes of a `length`-byte representation it names, clipped to the end (§14.1.2).
    func resolved(length: Int) -> ByteRangeAnswer {
        switch self {
        case .from(let first, let last):
            guard first < length else { return .unsatisfiable }
            let end = min(last ?? Int.max - 1, length - 1)
            return .part(first..<(end + 1))
        case .suffix(let count):
            guard count > 0, length > 0 else { return .unsatisfiable }
            return .part(max(0, length - count)..<length)
        }
    }

    /// A run of decimal digits as a number; one too large for an `Int` saturates (it names bytes
    /// past any end all the same). Nil when empty or anything but digits.
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(Int(byte - 0x30))
            value = overflowTimes || overflowSum ? Int.max / 2 : sum
        }
        return value
    }
}
