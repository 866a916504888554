import AnimatedImage
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import Metrics
import Synchronization
import SystemResources

/// `storage.backend = s3`: originals and records in an S3-compatible bucket (``S3Layout``), so
/// replicas on different machines share images without a shared file system, and a local cache
/// of originals on each replica (``OriginalsCache``), so serving frames needs no S3 call once an
/// original is local.
///
/// Guarantees: an upload is acknowledged only after S3 has acknowledged the original and then
/// the record that makes it visible; S3 makes a PUT (or a completed multipart upload) visible
/// whole or not at all, so no replica ever sees part of an image. The same bytes again are not
/// uploaded again (a `HEAD` first). A delete removes the record first, then the original unless
/// a named image still uses it.
final class S3Backend: StorageBackend {
    let client: S3Client
    let layout: S3Layout
    let cache: OriginalsCache
    let multipartThreshold: Int
    let partBytes: Int
    private let uploads: String
    private let logger: Logger
    /// Originals fetched ahead and unused ones forgotten, in the background: they wait on S3, so
    /// not on Dispatch's shared pool (see ``WorkerThreads``).
    private let background = WorkerThreads(name: "s3-background", limit: 8)
    /// Set when the backend goes away: the reachability probe stops.
    private let stopped = Flag()

    var lookupsAreLocal: Bool { false }
    var uploadDirectory: String { uploads }
    var isReachable: Bool { client.isReachable }

    /// - Parameter dataDirectory: local: `tmp/` for uploads and downloads in progress,
    ///   `originals/` for the cache.
    init(
        settings: S3StorageSettings, dataDirectory: String, metricsFactory: any MetricsFactory,
        logger: Logger
    ) throws(StorageFailure) {
        let endpoint = settings.endpoint.isEmpty ? S3Endpoint.aws(region: settings.region) : S3Endpoint(settings.endpoint)
        guard let endpoint else { throw .failed("storage.s3.endpoint '\(settings.endpoint)' is not http(s)://host[:port]") }
        client = S3Client(
            configuration: S3Client.Configuration(
                endpoint: endpoint, region: settings.region, bucket: settings.bucket, pathStyle: settings.pathStyle,
                credentials: S3Credentials(
                    accessKeyID: settings.accessKeyId, secretAccessKey: settings.secretAccessKey,
                    sessionToken: settings.sessionToken),
                requestTimeoutSeconds: settings.requestTimeoutSeconds, retries: settings.retries),
            metricsFactory: metricsFactory)
        layout = S3Layout(prefix: settings.prefix)
        uploads = Self.temporaryDirectory(of: dataDirectory)
        cache = try OriginalsCache(
            directory: dataDirectory + "/originals", temporaryDirectory: uploads,
            capacity: settings.localCacheBytes, metricsFactory: metricsFactory)
        multipartThreshold = settings.multipartThresholdBytes
        partBytes = settings.partBytes
        self.logger = logger
        // While S3 counts as unreachable, a cheap request every 2 s notices it is back.
        Self.probe(client, layout, stopped, queue: DispatchQueue(label: "flipbook.s3.probe"))
        for name in (try? FileManager.default.contentsOfDirectory(atPath: uploads)) ?? [] {
            let path = uploads + "/" + name
            if let stamp = FileStamp(path: path), Date().timeIntervalSince1970 - stamp.modified > 3600 { unlink(path) }
        }
    }

    deinit {
        stopped.set()
    }

    /// Where uploads and downloads in progress are written: `tmp/` of the data directory.
    static func temporaryDirectory(of dataDirectory: String) -> String {
        dataDirectory + "/tmp"
    }

    /// Every 2 s while S3 counts as unreachable, one cheap request, so readiness and lookups
    /// notice it is back without waiting for a client's request.
    private static func probe(_ client: S3Client, _ layout: S3Layout, _ stopped: Flag, queue: DispatchQueue) {
        queue.asyncAfter(deadline: .now() + 2) {
            guard !stopped.isSet else { return }
            if !client.isReachable {
                _ = try? client.send(
                    "ListObjectsV2", method: "GET", key: nil,
                    query: [("list-type", "2"), ("max-keys", "1"), ("prefix", layout.metaPrefix)])
            }
            probe(client, layout, stopped, queue: queue)
        }
    }

    /// The record key of `id`: `meta/{sha256}.json` for a content id, `names/{name}` otherwise.
    func recordKey(_ id: String) -> String {
        ImageID.isContentID(id) ? layout.meta(id) : layout.name(id)
    }

    // MARK: Reading

    func fetch(_ id: String) throws(StorageFailure) -> FetchedRecord? {
        let response = try client.send("GetObject", method: "GET", key: recordKey(id))
        switch response.status {
        case 200:
            do {
                return FetchedRecord(record: try StoredImage.decode(response.body), version: .etag(response.etag ?? ""))
            } catch {
                throw .failed("the record \(recordKey(id)) is not a Flipbook record: \(error)")
            }
        case 404:
            return nil
        default:
            throw Self.refusal("GetObject", recordKey(id), response)
        }
    }

    func revalidate(_ id: String, version: RecordVersion) throws(StorageFailure) -> Revalidation {
        guard case .etag(let etag) = version else { return .unchanged }
        if ImageID.isContentID(id) {
            // A content id's record never changes; only whether it still exists.
            let response = try client.send("HeadObject", method: "HEAD", key: layout.meta(id))
            switch response.status {
            case 200: return .unchanged
            case 404: return .gone
            default: throw Self.refusal("HeadObject", layout.meta(id), response)
            }
        }
        let response = try client.send(
            "GetObject", method: "GET", key: layout.name(id),
            headers: [("If-None-Match", etag)])
        switch response.status {
        case 304: return .unchanged
        case 404: return .gone
        case 200:
            do {
                return .changed(
                    FetchedRecord(
                        record: try StoredImage.decode(response.body),
                        version: .etag(response.etag ?? "")))
            } catch {
                throw .failed("the record \(layout.name(id)) is not a Flipbook record: \(error)")
            }
        default: throw Self.refusal("GetObject", layout.name(id), response)
        }
    }

    func hasLocalOriginal(_ record: StoredImage) -> Bool {
        cache.contains(record.sha256)
    }

    func originalPath(_ record: StoredImage) throws(StorageFailure) -> String {
        try originalPath(sha256: record.sha256)
    }

    func prefetchOriginal(_ sha256: String) {
        guard !cache.contains(sha256) else { return }
        background.submit { [self] in _ = try? originalPath(sha256: sha256) }
    }

    private func originalPath(sha256: String) throws(StorageFailure) -> String {
        let key = layout.original(sha256)
        return try cache.fill(sha256) { (destination: String) throws(StorageFailure) in
            let response = try client.download("GetObject", key: key, to: destination)
            guard response.status == 200 else { throw Self.refusal("GetObject", key, response) }
        }
    }

    /// Ids alone, from ListObjectsV2 (records and names): the store reads each record.
    func listImages(after cursor: String?, limit: Int) throws(StorageFailure) -> (entries: [ListedEntry], more: Bool) {
        let contentIDs = try listKeys(
            prefix: layout.metaPrefix, startAfter: cursor.map { layout.meta($0) },
            count: limit + 1
        ).compactMap { layout.contentID(ofMetaKey: $0) }
        let names = try listKeys(
            prefix: layout.namesPrefix, startAfter: cursor.map { layout.name($0) },
            count: limit + 1
        ).compactMap { layout.imageName(ofNameKey: $0) }
        let ids = (contentIDs + names).filter { cursor == nil || $0 > cursor! }.sorted()
        return (ids.prefix(limit).map { ListedEntry(id: $0, summary: nil) }, ids.count > limit)
    }

    /// Up to `count` keys under `prefix` after `startAfter`, in order (ListObjectsV2, following
    /// continuation tokens while S3 says more follow).
    func listKeys(prefix: String, startAfter: String?, count: Int) throws(StorageFailure) -> [String] {
        var keys: [String] = []
        var token: String?
        repeat {
            var query = [("list-type", "2"), ("prefix", prefix), ("max-keys", String(min(1000, count - keys.count)))]
            if let token {
                query.append(("continuation-token", token))
            } else if let startAfter {
                query.append(("start-after", startAfter))
            }
            let response = try client.send("ListObjectsV2", method: "GET", key: nil, query: query)
            guard response.status == 200 else { throw Self.refusal("ListObjectsV2", prefix, response) }
            keys += S3XML.values(of: "Key", in: response.body)
            let truncated = S3XML.value(of: "IsTruncated", in: response.body) == "true"
            token = truncated ? S3XML.value(of: "NextContinuationToken", in: response.body) : nil
        } while token != nil && keys.count < count
        return Array(keys.prefix(count))
    }

    // MARK: Writing

    func store(
        _ record: StoredImage, uploadPath: String,
        replacing previous: StoredImage?
    ) throws(StorageFailure) -> RecordVersion {
        defer { unlink(uploadPath) }  // adopted into the cache below when all went well
        if record.source == .named {
            // The reference first: from now on no delete removes the original under this name.
            try put("PutObject", key: layout.ref(record.sha256, record.id), body: .empty)
        }
        try ensureOriginal(record.sha256, file: uploadPath)
        let document: [UInt8]
        do {
            document = Array(try record.encoded())
        } catch {
            throw .failed("cannot encode the record of \(record.id): \(error)")
        }
        let etag = try put(
            "PutObject", key: recordKey(record.id), body: .bytes(document),
            contentType: "application/json")
        cache.adopt(record.sha256, from: uploadPath)
        if let previous, previous.sha256 != record.sha256, record.source == .named {
            // The name now points elsewhere: its old original goes unless something else uses it.
            _ = try? client.send("DeleteObject", method: "DELETE", key: layout.ref(previous.sha256, record.id))
            removeOriginalIfUnused(previous.sha256)
        }
        return .etag(etag)
    }

    /// A PUT with `If-Match` on the ETag the record was read at: S3 refuses it (412, or 404 when
    /// the record is gone, 409 when another conditional write is under way) if anything wrote or
    /// deleted the record meanwhile.
    func rewrite(_ record: StoredImage, over version: RecordVersion) throws(StorageFailure) -> RecordVersion? {
        guard case .etag(let etag) = version, !etag.isEmpty else { return nil }
        let document: [UInt8]
        do {
            document = Array(try record.encoded())
        } catch {
            throw .failed("cannot encode the record of \(record.id): \(error)")
        }
        let key = recordKey(record.id)
        let body = S3Client.Body.bytes(document)
        let response = try client.send(
            "PutObject", method: "PUT", key: key,
            headers: [
                ("Content-MD5", S3Client.md5Base64(of: body)), ("Content-Type", "application/json"), ("If-Match", etag),
            ], body: body)
        switch response.status {
        case 200: return .etag(response.etag ?? "")
        case 404, 409, 412: return nil
        default: throw Self.refusal("PutObject", key, response)
        }
    }

    func delete(_ record: StoredImage) throws(StorageFailure) -> Bool {
        let key = recordKey(record.id)
        let head = try client.send("HeadObject", method: "HEAD", key: key)
        guard head.status == 200 else {
            if head.status == 404 { return false }
            throw Self.refusal("HeadObject", key, head)
        }
        // The record first: without it no replica serves the image, whatever happens next.
        let deleted = try client.send("DeleteObject", method: "DELETE", key: key)
        guard deleted.status == 204 || deleted.status == 200 else { throw Self.refusal("DeleteObject", key, deleted) }
        if record.source == .named {
            _ = try? client.send("DeleteObject", method: "DELETE", key: layout.ref(record.sha256, record.id))
        }
        removeOriginalIfUnused(record.sha256)
        return true
    }

    /// Deletes the original of `sha256` when neither its content id nor any name uses it
    /// (best effort: an original left behind is only space, never a missing image).
    private func removeOriginalIfUnused(_ sha256: String) {
        do {
            guard try isUnused(sha256) else { return }
            _ = try client.send("DeleteObject", method: "DELETE", key: layout.original(sha256))
            cache.remove(sha256)
        } catch {
            logger.warning("original not removed", metadata: ["sha256": "\(sha256)", "error": "\(error)"])
        }
    }

    /// Whether the bucket says no image uses the original of `sha256`: no record under its
    /// content id, no name referring to it.
    private func isUnused(_ sha256: String) throws(StorageFailure) -> Bool {
        let meta = try client.send("HeadObject", method: "HEAD", key: layout.meta(sha256))
        guard meta.status == 404 else { return false }
        return try listKeys(prefix: layout.refs(sha256), startAfter: nil, count: 1).isEmpty
    }

    /// Another replica deleted an image of this content: the local copy goes once the bucket says
    /// nothing uses it any more (asked in the background; the records in memory are only some).
    func forgetOriginal(_ sha256: String) {
        background.submit { [self] in
            if (try? isUnused(sha256)) == true { cache.remove(sha256) }
        }
    }

    /// Ready when S3 answers and the local directory takes files; degraded while S3 cannot be
    /// reached (what is local is still served).
    func health() -> StorageHealth {
        guard DurableFiles.acceptsNewFiles(in: uploads) else {
            return StorageHealth(.down, detail: "The local data directory is not writable.")
        }
        if !client.isReachable {
            return StorageHealth(
                .degraded,
                detail: "S3 cannot be reached (\(client.lastError ?? "no answer")): "
                    + "images whose originals are local are served; uploads answer 503.")
        }
        return StorageHealth(.ready)
    }

    static func refusal(_ operation: String, _ key: String, _ response: S3Client.Response) -> StorageFailure {
        let code = S3XML.errorCode(response.body) ?? ""
        return .failed("S3 \(operation) \(key): HTTP \(response.status) \(code)")
    }
}

/// A flag set once, read from any thread.
final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
