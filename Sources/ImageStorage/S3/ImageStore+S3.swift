import AnimatedImage
import FrameCache
import Logging
import Metrics
import SystemResources

extension ImageStore {
    /// A store over an S3 bucket (`storage.backend = s3`), with a local cache of originals, and
    /// the uploads and downloads in progress, in `dataDirectory`. The log line that says it is open
    /// names the endpoint, bucket and key id, never the secret.
    public convenience init(
        s3 settings: S3StorageSettings, dataDirectory: String, libraryDirectories: [String] = [],
        limits: DecodeLimits = .default, recordCacheBytes: Int = ImageStore.defaultRecordCacheBytes,
        recheckSeconds: Double = ImageStore.defaultRecheckSeconds,
        clock: any MonotonicClock = SystemMonotonicClock(), readers: Int = 1,
        decodeBudget: DecodeMemoryBudget? = nil, metricsFactory: any MetricsFactory,
        logger: Logger = Logger(label: "flipbook.storage")
    ) throws {
        let backend: S3Backend
        do {
            backend = try S3Backend(
                settings: settings, dataDirectory: dataDirectory, metricsFactory: metricsFactory, logger: logger)
        } catch {
            throw StoreError.io(error.description)
        }
        self.init(
            backend: backend, libraryDirectories: libraryDirectories, limits: limits,
            maxLoadedImages: ImageStore.defaultMaxLoadedImages, recordCacheBytes: recordCacheBytes,
            recheckSeconds: recheckSeconds, clock: clock, readers: readers, decodeBudget: decodeBudget, logger: logger)
        let (files, bytes) = backend.cache.usage
        let endpoint = backend.client.configuration.endpoint
        // Never the credentials: the key id at most.
        logger.info(
            "image store open",
            metadata: [
                "backend": "s3", "endpoint": "\(endpoint.scheme + "://" + endpoint.authority(host: endpoint.host))",
                "bucket": "\(settings.bucket)", "prefix": "\(settings.prefix)",
                "accessKeyId": "\(settings.accessKeyId)", "localCacheFiles": "\(files)", "localCacheBytes": "\(bytes)",
                "localCacheLimit": "\(settings.localCacheBytes)", "dataDir": "\(dataDirectory)",
            ])
    }
}
