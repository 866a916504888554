import Metrics

/// The cache's swift-metrics instruments (exported by whatever backend the process
/// bootstraps, Prometheus in the service).
struct CacheMetrics: Sendable {
    private let hits: Counter
    private let misses: Counter
    private let decodeTime: Metrics.Timer
    private let bytesCached: Gauge
    private let depth: Gauge
    private let warningPurges: Counter
    private let criticalPurges: Counter

    init(factory: any MetricsFactory) {
        hits = Counter(label: "flipbook_cache_hits_total", factory: factory)
        misses = Counter(label: "flipbook_cache_misses_total", factory: factory)
        decodeTime = Metrics.Timer(label: "flipbook_frame_decode_seconds", dimensions: [], factory: factory)
        bytesCached = Gauge(label: "flipbook_cache_bytes", factory: factory)
        depth = Gauge(label: "flipbook_decode_queue_depth", factory: factory)
        warningPurges = Counter(label: "flipbook_cache_purges_total", dimensions: [("level", "warning")], factory: factory)
        criticalPurges = Counter(label: "flipbook_cache_purges_total", dimensions: [("level", "critical")], factory: factory)
    }

    func hit() { hits.increment() }
    func hits(_ count: Int) { hits.increment(by: count) }
    func miss() { misses.increment() }
    func decoded(seconds: Double) { decodeTime.recordNanoseconds(Int64(seconds * 1e9)) }
    func bytes(_ value: Int) { bytesCached.record(value) }
    func queueDepth(_ value: Int) { depth.record(value) }
    func purge(_ level: PressureLevel) { (level == .critical ? criticalPurges : warningPurges).increment() }
}
