/// IPv4 host literals in every form URL parsers (WHATWG's host parser, `inet_aton`, curl) accept:
/// 1 to 4 parts separated by dots, each decimal, hexadecimal (`0x7f`) or octal (`0177`), the last
/// part filling the bytes that remain (`127.1`, `2130706433`, `0x7f.1`), one trailing dot allowed.
public enum IPv4Literal {
    /// Whether `host` must be read as an IPv4 address: its last label is a number (WHATWG's
    /// "ends in a number"). Such a host that does not parse is refused, never resolved as a name.
    public static func looksNumeric(_ host: Substring) -> Bool {
        var labels = host.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count > 1, labels.last?.isEmpty == true { labels.removeLast() }
        guard let last = labels.last, !last.isEmpty else { return false }
        if last.utf8.allSatisfy({ $0 &- 0x30 < 10 }) { return true }
        let lower = last.lowercased()
        return lower.hasPrefix("0x") && lower.dropFirst(2).utf8.allSatisfy { isHexDigit($0) }
    }

    /// The address of a numeric host in any of the forms above; nil when it is not one or a part
    /// overflows.
    public static func parse(_ host: Substring) -> UInt32? {
        var labels = host.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count > 1, labels.last?.isEmpty == true { labels.removeLast() }
        guard (1...4).contains(labels.count) else { return nil }
        var parts: [UInt64] = []
        for label in labels {
            guard let value = number(label) else { return nil }
            parts.append(value)
        }
        let last = parts.removeLast()
        for part in parts where part > 255 { return nil }
        let remainingBits = UInt64(8 * (4 - parts.count))
        guard last < (UInt64(1) << remainingBits) else { return nil }
        var value: UInt64 = 0
        for (index, part) in parts.enumerated() { value |= part << UInt64(24 - 8 * index) }
        return UInt32(value | last)
    }

    /// Exactly four decimal parts of 0…255 without leading zeros (`127.0.0.1`), the form address
    /// settings are written in.
    public static func parseDottedQuad(_ text: Substring) -> UInt32? {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count == 4 else { return nil }
        var value: UInt32 = 0
        for label in labels {
            guard (1...3).contains(label.utf8.count), label.utf8.allSatisfy({ $0 &- 0x30 < 10 }),
                label.utf8.count == 1 || label.utf8.first != 0x30, let part = UInt32(label), part <= 255
            else { return nil }
            value = value << 8 | part
        }
        return value
    }

    /// One part: `0x…` hexadecimal, `0…` octal, else decimal; nil when malformed or above 2³².
    static func number(_ label: Substring) -> UInt64? {
        guard !label.isEmpty else { return nil }
        var digits = label.utf8[...]
        var radix: UInt64 = 10
        if digits.count >= 2, digits.first == 0x30, digits.dropFirst().first.map({ $0 | 0x20 == 0x78 }) == true {
            radix = 16
            digits = digits.dropFirst(2)
        } else if digits.count >= 2, digits.first == 0x30 {
            radix = 8
            digits = digits.dropFirst()
        }
        var value: UInt64 = 0
        for byte in digits {
            let digit: UInt64
            switch byte {
            case 0x30...0x39: digit = UInt64(byte - 0x30)
            case 0x61...0x66: digit = UInt64(byte - 0x61 + 10)
            case 0x41...0x46: digit = UInt64(byte - 0x41 + 10)
            default: return nil
            }
            guard digit < radix else { return nil }
            value = value * radix + digit
            guard value <= UInt64(UInt32.max) else { return nil }
        }
        return value  // "0x" alone is 0, as WHATWG reads it
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        byte &- 0x30 < 10 || (byte | 0x20) &- 0x61 < 6
    }
}
