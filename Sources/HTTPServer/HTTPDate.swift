import Glibc

/// The `Date: …\r\n` header line in IMF-fixdate form, rebuilt at most once per second per loop.
struct HTTPDateCache {
    private(set) var line: [UInt8] = []
    private var second: Int = -1

    /// Refreshes the line if the wall-clock second changed; true when it did.
    @discardableResult
    mutating func refresh() -> Bool {
        let now = time(nil)
        guard now != second else { return false }
        second = now
        line = Self.format(now)
        return true
    }

    static func format(_ seconds: Int) -> [UInt8] {
        var clock = time_t(seconds)
        var parts = tm()
        gmtime_r(&clock, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let text =
            "Date: \(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT\r\n"
        return Array(text.utf8)
    }
}
