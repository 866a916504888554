/// IPv6 address text (RFC 4291 §2.2): eight groups of up to four hexadecimal digits, one `::`
/// for a run of zero groups, an optional dotted-quad IPv4 tail. Zone identifiers (`%eth0`) are not
/// accepted: a source URL has no business naming an interface.
enum IPv6Literal {
    static func parse(_ text: Substring) -> IPAddress? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8.count <= 45, utf8.contains(0x3a) else { return nil }
        var head: [UInt16] = []
        var tail: [UInt16] = []
        var sawGap = false
        var i = 0
        if utf8.starts(with: [0x3a, 0x3a]) {
            sawGap = true
            i = 2
            if i == utf8.count { return .v6(high: 0, low: 0) }
        } else if utf8[0] == 0x3a {
            return nil
        }
        while i < utf8.count {
            // An IPv4 tail: the rest has a dot.
            var j = i
            while j < utf8.count, utf8[j] != 0x3a { j += 1 }
            let piece = utf8[i..<j]
            if piece.contains(0x2e) {
                guard j == utf8.count,
                    let v4 = IPv4Literal.parseDottedQuad(Substring(decoding: piece, as: UTF8.self))
                else { return nil }
                let groups = [UInt16(v4 >> 16), UInt16(truncatingIfNeeded: v4)]
                if sawGap { tail += groups } else { head += groups }
                i = j
                break
            }
            guard (1...4).contains(piece.count), piece.allSatisfy(IPv4Literal.isHexDigit),
                let group = UInt16(String(decoding: piece, as: UTF8.self), radix: 16)
            else { return nil }
            if sawGap { tail.append(group) } else { head.append(group) }
            i = j
            if i == utf8.count { break }
            // At a colon: `::` is the gap (once), `:` separates.
            if i + 1 < utf8.count, utf8[i + 1] == 0x3a {
                guard !sawGap else { return nil }
                sawGap = true
                i += 2
                if i == utf8.count { break }
            } else {
                i += 1
                guard i < utf8.count else { return nil }  // a trailing single colon
            }
        }
        let count = head.count + tail.count
        if sawGap {
            guard count <= 7 else { return nil }
        } else {
            guard count == 8 else { return nil }
        }
        let groups = head + [UInt16](repeating: 0, count: 8 - count) + tail
        var high: UInt64 = 0
        var low: UInt64 = 0
        for k in 0..<4 { high = high << 16 | UInt64(groups[k]) }
        for k in 4..<8 { low = low << 16 | UInt64(groups[k]) }
        return .v6(high: high, low: low)
    }
}
