import Synchronization

/// What this replica's products did since it started, for `/metrics` (``prometheusText(usage:)``)
/// and `/stats`: builds and their seconds by product, requests answered by a kept product (from
/// the local disk, or brought from the shared store), failed builds by reason, and where the
/// frames of builds came from (the frame cache, or decoded).
final class DerivedCounters: Sendable {
    /// The two kinds of product.
    enum Product: String, CaseIterable, Sendable {
        case preview, storyboard
    }

    /// Where a kept product was found.
    enum HitSource: String, CaseIterable, Sendable {
        /// This replica's disk.
        case disk
        /// The shared store (`storage.backend = s3`), then kept on this replica's disk.
        case shared
    }

    struct Values: Sendable {
        var builds: [Product: Int] = [:]
        var buildSeconds: [Product: Double] = [:]
        var hits: [HitSource: Int] = [:]
        var failures: [String: Int] = [:]
        var framesFromCache = 0
        var frameDecodes = 0
    }

    private let values = Mutex(Values())

    var current: Values { values.withLock { $0 } }

    func built(_ product: Product, seconds: Double, framesFromCache: Int, frameDecodes: Int) {
        values.withLock {
            $0.builds[product, default: 0] += 1
            $0.buildSeconds[product, default: 0] += seconds
            $0.framesFromCache += framesFromCache
            $0.frameDecodes += frameDecodes
        }
    }

    func hit(_ source: HitSource) { values.withLock { $0.hits[source, default: 0] += 1 } }

    func failed(_ failure: DerivedFailure) { values.withLock { $0.failures[failure.reason, default: 0] += 1 } }

    /// The products' lines of `/metrics`, with the store's `usage` (bytes and products kept,
    /// evictions).
    func prometheusText(usage: (bytes: Int, products: Int, evictions: Int)) -> String {
        let values = current
        var text = "# TYPE flipbook_derived_builds_total counter\n"
        for product in Product.allCases {
            text += "flipbook_derived_builds_total{product=\"\(product.rawValue)\"} \(values.builds[product] ?? 0)\n"
        }
        text += "# TYPE flipbook_derived_build_seconds_total counter\n"
        for product in Product.allCases {
            text +=
                "flipbook_derived_build_seconds_total{product=\"\(product.rawValue)\"} \(values.buildSeconds[product] ?? 0)\n"
        }
        text += "# TYPE flipbook_derived_hits_total counter\n"
        for source in HitSource.allCases {
            text += "flipbook_derived_hits_total{source=\"\(source.rawValue)\"} \(values.hits[source] ?? 0)\n"
        }
        text += "# TYPE flipbook_derived_failures_total counter\n"
        for reason in DerivedFailure.reasons {
            text += "flipbook_derived_failures_total{reason=\"\(reason)\"} \(values.failures[reason] ?? 0)\n"
        }
        text += "# TYPE flipbook_derived_frames_total counter\n"
        text += "flipbook_derived_frames_total{source=\"cache\"} \(values.framesFromCache)\n"
        text += "flipbook_derived_frames_total{source=\"decoded\"} \(values.frameDecodes)\n"
        text += "# TYPE flipbook_derived_bytes gauge\nflipbook_derived_bytes \(usage.bytes)\n"
        text += "# TYPE flipbook_derived_products gauge\nflipbook_derived_products \(usage.products)\n"
        text += "# TYPE flipbook_derived_evictions_total counter\nflipbook_derived_evictions_total \(usage.evictions)\n"
        return text
    }
}
