import FrameCache
import Logging
import Metrics
import SystemResources

extension ImageStore {
    /// The store `storage.*` describes: over the data directory (`fs`) or over an S3 bucket with
    /// a local cache of originals in the data directory (`s3`). `readers`: the event loops that look
    /// records up (each has a view of the record cache, ``RecordCache``).
    ///
    /// `decodeBudget`: the decode-memory budget verification reserves from; its capacity is the
    /// most one decode may need (``DecodeLimits/maxDecodeBytes``). nil: neither is bounded.
    public static func open(
        settings: FlipbookSettings, clock: any MonotonicClock = SystemMonotonicClock(), readers: Int = 1,
        decodeBudget: DecodeMemoryBudget? = nil,
        metricsFactory: any MetricsFactory, logger: Logger
    ) throws -> ImageStore {
        let storage = settings.storage
        let limits = settings.limits.decodeLimits(decodeBudget: decodeBudget?.capacityBytes ?? .max)
        guard storage.backend == "s3" else {
            return try ImageStore(
                dataDirectory: storage.dataDir, libraryDirectories: storage.libraryDirs,
                limits: limits, recordCacheBytes: storage.recordCacheBytes, recheckSeconds: storage.recheckSeconds,
                clock: clock, readers: readers, decodeBudget: decodeBudget, logger: logger)
        }
        let backend: S3Backend
        do {
            backend = try S3Backend(
                settings: storage.s3, dataDirectory: storage.dataDir,
                metricsFactory: metricsFactory, logger: logger)
        } catch {
            throw StoreError.io(error.description)
        }
        let store = ImageStore(
            backend: backend, libraryDirectories: storage.libraryDirs,
            limits: limits, maxLoadedImages: defaultMaxLoadedImages,
            recordCacheBytes: storage.recordCacheBytes, recheckSeconds: storage.recheckSeconds, clock: clock, readers: readers,
            decodeBudget: decodeBudget, logger: logger)
        let (files, bytes) = backend.cache.usage
        let endpoint = backend.client.configuration.endpoint
        // Never the credentials: the key id at most.
        logger.info(
            "image store open",
            metadata: [
                "backend": "s3", "endpoint": "\(endpoint.scheme + "://" + endpoint.authority(host: endpoint.host))",
                "bucket": "\(storage.s3.bucket)", "prefix": "\(storage.s3.prefix)",
                "accessKeyId": "\(storage.s3.accessKeyId)", "localCacheFiles": "\(files)", "localCacheBytes": "\(bytes)",
                "localCacheLimit": "\(storage.s3.localCacheBytes)", "dataDir": "\(storage.dataDir)",
            ])
        return store
    }
}
