/// A moment of playback as clients send it: a non-negative decimal number of milliseconds
/// (`150`, `150.0`, `150.5`; JavaScript players compute fractional times from
/// `performance.now()` or `currentTime * 1000`). Kept exactly, whatever its length: frame
/// intervals start and end on whole milliseconds, so only the whole part decides the frame,
/// and it is kept as digits rather than rounded into a binary floating-point number.
public struct PlaybackTime: Sendable, Equatable, CustomStringConvertible {
    /// The whole milliseconds as decimal digit values, most significant first, without leading
    /// zeros (empty for 0).
    public let wholeDigits: [UInt8]

    /// Reads `digits` or `digits.digits`; anything else (signs, exponents, spaces, a bare or
    /// trailing point, other characters) is not a playback time.
    public init?(decimal text: some StringProtocol) {
        let bytes = Array(text.utf8)
        let point = bytes.firstIndex(of: UInt8(ascii: "."))
        let whole = bytes[..<(point ?? bytes.endIndex)]
        let fraction = point.map { bytes[($0 + 1)...] } ?? []
        func isDigits(_ part: ArraySlice<UInt8>) -> Bool {
            !part.isEmpty && part.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
        guard isDigits(whole), point == nil || isDigits(fraction) else { return nil }
        wholeDigits = whole.drop { $0 == UInt8(ascii: "0") }.map { $0 - UInt8(ascii: "0") }
    }

    /// A whole number of milliseconds (negative values count as 0).
    public init(milliseconds: Int) {
        wholeDigits = String(max(0, milliseconds)).utf8.drop { $0 == UInt8(ascii: "0") }.map { $0 - UInt8(ascii: "0") }
    }

    /// The whole milliseconds divided by `divisor` (> 0): the remainder exactly, the quotient
    /// saturated at `cap` (digit by digit, so any length works).
    func divided(by divisor: Int, quotientCap cap: Int) -> (quotient: Int, remainder: Int) {
        precondition(divisor > 0 && divisor <= Int.max / 10 - 9)
        var quotient = 0
        var remainder = 0
        for digit in wholeDigits {
            remainder = remainder * 10 + Int(digit)
            let step = remainder / divisor
            remainder %= divisor
            quotient = quotient > (cap - step) / 10 ? cap : min(cap, quotient * 10 + step)
        }
        return (quotient, remainder)
    }

    public var description: String {
        wholeDigits.isEmpty ? "0" : String(decoding: wholeDigits.map { $0 + UInt8(ascii: "0") }, as: UTF8.self)
    }
}
