import Metrics

/// The cache's swift-metrics instruments (exported by whatever backend the process
/// bootstraps, Prometheus in the service).
struct CacheMetrics: Sendable {
    private let hits = Counter(label: "flipbook_cache_hits_total")
    private let misses = Counter(label: "flipbook_cache_misses_total")
    private let decodeTime = Metrics.Timer(label: "flipbook_frame_decode_seconds", preferredDisplayUnit: .seconds)
    private let bytesCached = Gauge(label: "flipbook_cache_bytes")
    private let depth = Gauge(label: "flipbook_decode_queue_depth")
    private let warningPurges = Counter(label: "flipbook_cache_purges_total", dimensions: [("level", "warning")])
    private let criticalPurges = Counter(label: "flipbook_cache_purges_total", dimensions: [("level", "critical")])

    func hit() { hits.increment() }
    func miss() { misses.increment() }
    func decoded(seconds: Double) { decodeTime.recordNanoseconds(Int64(seconds * 1e9)) }
    func bytes(_ value: Int) { bytesCached.record(value) }
    func queueDepth(_ value: Int) { depth.record(value) }
    func purge(_ level: PressureLevel) { (level == .critical ? criticalPurges : warningPurges).increment() }
}
