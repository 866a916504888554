import Dispatch
import Metrics
import OutboundHTTP
import Prometheus
import SourceRules
import Synchronization
import SystemResources
import URLSigning

/// What the source routes and the signature check share: the fetcher, the threads fetches wait
/// on (off the event loops and off the ingest workers), the signing policy, and the counters of
/// `flipbook_source_fetches_total{result}` (`ok`, `not-modified`, or the refusal's rule).
final class SourceServices: Sendable {
    let fetcher: SourceFetcher
    /// nil when `security.urlKeys` is empty.
    let signing: SignedRequestPolicy?
    let refreshSeconds: Double
    private let factory: any MetricsFactory
    private let counters = Mutex<[String: Metrics.Counter]>([:])
    /// Fetches under way; beyond ``maxConcurrentFetches`` a registration is answered 429 at
    /// once instead of holding another thread on a slow origin.
    let fetching = Mutex(0)
    static let maxConcurrentFetches = 32
    /// Ids whose background refresh (``SourceRoutes/refreshIfDue(_:)``) is under way.
    let refreshing = Mutex<Set<String>>([])

    init(settings: FlipbookSettings, registry: PrometheusCollectorRegistry, resolver: any SourceResolver) {
        fetcher = settings.sources.fetcher(maxFileBytes: settings.limits.decode.maxFileBytes, resolver: resolver)
        let keys = settings.security.signingKeys
        signing =
            keys.isEmpty
            ? nil : SignedRequestPolicy(signature: URLSignature(keys: keys), routes: Set(settings.security.signedRoutes))
        refreshSeconds = settings.sources.refreshSeconds
        factory = PrometheusMetricsFactory(registry: registry)
    }

    /// Counts one fetch by how it ended.
    func count(_ result: String) {
        let counter = counters.withLock { counters in
            if let counter = counters[result] { return counter }
            let counter = Metrics.Counter(
                label: "flipbook_source_fetches_total", dimensions: [("result", result)], factory: factory)
            counters[result] = counter
            return counter
        }
        counter.increment()
    }
}

extension SourceServices {
    /// Runs a fetch (a registration, a refresh) on a thread of its own: it waits on the origin for
    /// as long as the transfer takes, which on Dispatch's shared pool would hold one of its few
    /// threads and leave the work queued behind it waiting (see ``RequestDeadlines``). Fetches
    /// past ``maxConcurrentFetches`` are refused at once on theirs.
    func inBackground(_ work: @escaping @Sendable () -> Void) {
        DetachedThread.start(name: "flipbook-fetch", work)
    }

    /// Takes a fetch slot; false when all are taken.
    func claimFetch() -> Bool {
        fetching.withLock { count in
            guard count < Self.maxConcurrentFetches else { return false }
            count += 1
            return true
        }
    }

    func releaseFetch() { fetching.withLock { $0 -= 1 } }

    /// Marks `id` as being refreshed; false when a refresh of it is already under way.
    func claimRefresh(_ id: String) -> Bool {
        refreshing.withLock { $0.insert(id).inserted }
    }

    func releaseRefresh(_ id: String) {
        _ = refreshing.withLock { $0.remove(id) }
    }
}
