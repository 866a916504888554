/// A number with a fixed count of decimals ("0.07", "12.500") for log fields and CLI summaries:
/// what `String(format: "%.Nf")` gave, without Foundation (whose formatting links ICU).
public enum DecimalText {
    /// `value` rounded to `places` decimals (a tie of the scaled value to even, as printf rounds;
    /// a value that is only close to a tie may round the other way), without an exponent; a
    /// negative value that rounds to zero keeps its sign ("-0.00"), as printf's does.
    public static func fixed(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        let scale = (0..<max(0, places)).reduce(Int64(1)) { scale, _ in scale * 10 }
        let units = Int64((abs(value) * Double(scale)).rounded(.toNearestOrEven))
        let sign = value.sign == .minus ? "-" : ""
        guard places > 0 else { return sign + String(units) }
        let fraction = String(units % scale)
        return sign + String(units / scale) + "." + String(repeating: "0", count: places - fraction.count) + fraction
    }
}
