import Metrics
import Synchronization

/// Request counters (by method, route and status) and latency timers (by route), made once per
/// label set and reused, so the hot path does not ask the metrics backend for them each time.
final class HTTPMetrics: Sendable {
    private let factory: any MetricsFactory
    private let counters = Mutex<[String: Counter]>([:])
    private let timers = Mutex<[String: Metrics.Timer]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    func record(method: String, route: String, status: Int, nanoseconds: Int64) {
        let key = method + " " + route + " " + String(status)
        let counter = counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: "flipbook_http_requests_total",
                                  dimensions: [("method", method), ("route", route), ("status", String(status))],
                                  factory: factory)
            counters[key] = counter
            return counter
        }
        counter.increment()
        let timer = timers.withLock { timers in
            if let timer = timers[route] { return timer }
            let timer = Metrics.Timer(label: "flipbook_http_request_duration_seconds",
                                      dimensions: [("route", route)], factory: factory)
            timers[route] = timer
            return timer
        }
        timer.recordNanoseconds(nanoseconds)
    }
}
