import HTTPServer
import Prometheus
import Synchronization
import SystemResources

/// Request counters (`flipbook_http_requests_total` by method, route and status) and latency
/// histograms (`flipbook_http_request_duration_seconds` by route), kept per event loop — each
/// loop records into its own table behind its own lock, which only that loop and a scrape take —
/// and summed when `/metrics` is scraped. Names, labels and buckets are those swift-prometheus
/// gives a swift-metrics `Counter` and `Timer`, which these used to be.
///
/// Labels stay bounded whatever clients send: the route is the matched pattern (`unmatched` when
/// none matched), the method one of the standard ones (`other` for any other token, `-` when the
/// request line was not understood).
final class HTTPMetrics: Sendable {
    /// The upper bounds of the latency buckets, in nanoseconds (swift-prometheus' defaults for a
    /// `Timer`: 5 ms … 10 s). Literals, so the table is laid out at build time and reading it on
    /// every response initializes nothing.
    static let bucketBounds: [Int64] = [
        5_000_000, 10_000_000, 25_000_000, 50_000_000, 100_000_000, 250_000_000, 500_000_000,
        1_000_000_000, 2_500_000_000, 5_000_000_000, 10_000_000_000,
    ]
    static let methods: [HTTPMethod] = [.GET, .HEAD, .POST, .PUT, .DELETE, .PATCH, .OPTIONS, .TRACE, .CONNECT]
    private static let otherMethod = methods.count
    private static let unparsedMethod = methods.count + 1

    /// One latency histogram.
    struct Histogram {
        /// The observations in each bucket alone (above the previous bound, up to this one):
        /// one increment per observation; summed into Prometheus' cumulative buckets when the
        /// metrics are written. Held in the histogram itself (no array to check for uniqueness
        /// on every response); one count per bound of ``HTTPMetrics/bucketBounds``.
        var buckets = InlineArray<11, Int>(repeating: 0)
        var sumNanoseconds: Int64 = 0
        var count = 0

        mutating func record(_ nanoseconds: Int64) {
            // Most requests take less than the first bound: search from the bottom.
            var i = 0
            HTTPMetrics.bucketBounds.withUnsafeBufferPointer { bounds in
                while i < bounds.count && nanoseconds > bounds[i] { i += 1 }
            }
            if i < buckets.count { buckets[i] += 1 }
            sumNanoseconds &+= nanoseconds
            count += 1
        }

        mutating func add(_ other: Histogram) {
            for i in buckets.indices { buckets[i] += other.buckets[i] }
            sumNanoseconds &+= other.sumNanoseconds
            count += other.count
        }
    }

    /// One loop's counts: requests by (route, method, status) packed in one key, latency by route
    /// (index + 1; 0 = unmatched), and the routes' labels as responses named them.
    struct Counts {
        var requests = RequestTally()
        var latency: [Histogram] = [Histogram()]
        var routeLabels: [String?] = ["unmatched"]

        mutating func add(_ other: Counts) {
            requests.add(other.requests)
            grow(to: other.latency.count)
            for i in other.latency.indices {
                latency[i].add(other.latency[i])
                if routeLabels[i] == nil { routeLabels[i] = other.routeLabels[i] }
            }
        }

        mutating func grow(to count: Int) {
            while latency.count < count {
                latency.append(Histogram())
                routeLabels.append(nil)
            }
        }
    }

    private let loops: PerLoop<Counts>

    /// - Parameter loops: the number of event loops.
    init(loops: Int) {
        self.loops = PerLoop(count: loops) { Counts() }
    }

    /// Counts one response (on its event loop).
    func record(_ record: HTTPAccessRecord) {
        let route = record.route == nil ? 0 : record.routeIndex + 1
        let method = Self.methodIndex(record.method)
        let key = UInt64(route) << 32 | UInt64(method) << 16 | UInt64(UInt16(clamping: record.status))
        let nanoseconds = record.durationNanoseconds
        loops.withLock(record.loop) { counts in
            counts.requests.increment(key)
            if route >= counts.latency.count { counts.grow(to: route + 1) }
            if counts.routeLabels[route] == nil { counts.routeLabels[route] = record.route }
            counts.latency[route].record(nanoseconds)
        }
    }

    private static func methodIndex(_ method: HTTPMethod) -> Int {
        // `methods` lists the constants in their declared order.
        if let index = method.constantIndex { return index }
        if method.rawValue == "-" { return unparsedMethod }
        return methods.firstIndex(of: method) ?? otherMethod
    }

    private static func methodLabel(_ index: Int) -> String {
        index < methods.count ? methods[index].rawValue : (index == otherMethod ? "other" : "-")
    }

    /// The totals of every loop.
    func totals() -> Counts {
        var total = Counts()
        loops.withEachLock { total.add($0) }
        return total
    }

    /// The number of responses counted with `status` (on `route`, a pattern or `unmatched`, when
    /// given).
    func count(route: String? = nil, status: Int) -> Int {
        let totals = totals()
        return totals.requests.all.reduce(0) { sum, entry in
            let routeIndex = Int(entry.key >> 32)
            let matches = route.map { totals.routeLabels[routeIndex] == $0 } ?? true
            return sum + (matches && Int(entry.key & 0xFFFF) == status ? entry.value : 0)
        }
    }

    /// Appends both families in the Prometheus text format.
    func emit(into buffer: inout [UInt8]) {
        let totals = totals()
        if !totals.requests.isEmpty {
            buffer.append(contentsOf: "# TYPE flipbook_http_requests_total counter\n".utf8)
            for (key, value) in totals.requests.all.sorted(by: { $0.key < $1.key }) {
                let route = Int(key >> 32)
                let method = Int((key >> 16) & 0xFFFF)
                let status = Int(key & 0xFFFF)
                buffer.append(contentsOf: "flipbook_http_requests_total{method=\"".utf8)
                Self.appendLabelValue(Self.methodLabel(method), to: &buffer)
                buffer.append(contentsOf: "\",route=\"".utf8)
                Self.appendLabelValue(totals.routeLabels[route] ?? "unmatched", to: &buffer)
                buffer.append(contentsOf: "\",status=\"\(status)\"} \(value)\n".utf8)
            }
        }
        let used = totals.latency.indices.filter { totals.latency[$0].count > 0 }
        guard !used.isEmpty else { return }
        let name = "flipbook_http_request_duration_seconds"
        buffer.append(contentsOf: "# TYPE \(name) histogram\n".utf8)
        for index in used {
            let histogram = totals.latency[index]
            var label: [UInt8] = Array("route=\"".utf8)
            Self.appendLabelValue(totals.routeLabels[index] ?? "unmatched", to: &label)
            label.append(0x22)
            var count = 0
            for (i, bound) in Self.bucketBounds.enumerated() {
                count += histogram.buckets[i]
                let le = Duration.nanoseconds(bound).bucketRepresentation
                Self.appendSample(name + "_bucket", label, more: ",le=\"\(le)\"", value: "\(count)", to: &buffer)
            }
            Self.appendSample(name + "_bucket", label, more: ",le=\"+Inf\"", value: "\(histogram.count)", to: &buffer)
            let sum = Duration.nanoseconds(histogram.sumNanoseconds).bucketRepresentation
            Self.appendSample(name + "_sum", label, value: sum, to: &buffer)
            Self.appendSample(name + "_count", label, value: "\(histogram.count)", to: &buffer)
        }
    }

    /// One sample line: `SERIES{LABEL MORE} VALUE`, `label` already escaped.
    private static func appendSample(
        _ series: String, _ label: [UInt8], more: String = "", value: String, to buffer: inout [UInt8]
    ) {
        buffer.append(contentsOf: "\(series){".utf8)
        buffer.append(contentsOf: label)
        buffer.append(contentsOf: "\(more)} \(value)\n".utf8)
    }

    /// A label value with `\`, `"` and newlines escaped, as the text format requires.
    static func appendLabelValue(_ value: String, to buffer: inout [UInt8]) {
        for byte in value.utf8 {
            switch byte {
            case 0x5C: buffer.append(contentsOf: [0x5C, 0x5C])
            case 0x22: buffer.append(contentsOf: [0x5C, 0x22])
            case 0x0A: buffer.append(contentsOf: [0x5C, 0x6E])
            default: buffer.append(byte)
            }
        }
    }
}
