import FrameCache
import ImageStorage
import Logging
import Metrics
import SystemResources

extension ImageStore {
    /// The store `storage.*` describes: over the data directory (`fs`) or over an S3 bucket with
    /// a local cache of originals in the data directory (`s3`). `readers`: the event loops that look
    /// records up (each has a view of the store's record cache).
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
        return try ImageStore(
            s3: storage.s3, dataDirectory: storage.dataDir, libraryDirectories: storage.libraryDirs,
            limits: limits, recordCacheBytes: storage.recordCacheBytes, recheckSeconds: storage.recheckSeconds,
            clock: clock, readers: readers, decodeBudget: decodeBudget, metricsFactory: metricsFactory, logger: logger)
    }
}
