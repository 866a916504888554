import AnimatedImage
import FrameCache
import Logging
import Metrics

#if canImport(Glibc)
import Glibc
#endif

/// Importing files without a server (`flipbook import`): each file goes through what an upload of
/// its bytes goes through — the same size limit, the same verification with the same decode-memory
/// reservation, the same record under the same content id.
extension ImageStore {
    /// A file ``importFile(_:maxBytes:)`` did not store, and why.
    public struct ImportRefusal: Error, CustomStringConvertible {
        /// The status `POST /images` answers for the same bytes (413, 415, 422, 429, 500, 503).
        public var status: Int
        public var description: String
    }

    /// The store `flipbook serve` opens for `settings`, with the decode-memory budget it sizes the
    /// same way, for a command that stores images without serving them.
    public static func openForImport(settings: FlipbookSettings, logger: Logger) throws -> ImageStore {
        try open(
            settings: settings, decodeBudget: decodeBudget(for: settings, memory: MemoryLimits.detect()),
            metricsFactory: NOOPMetricsHandler.instance, logger: logger)
    }

    /// The decode-memory budget a process of `settings` has (`limits.maxDecodeBytes`), shared by
    /// its decode threads and upload verification.
    public static func decodeBudget(for settings: FlipbookSettings, memory: MemoryLimits) -> DecodeMemoryBudget {
        DecodeMemoryBudget(
            capacityBytes: settings.limits.decodeBudgetBytes(memory), maxWaiting: settings.cache.maxWaitingRequests)
    }

    /// Stores the image file at `path` as `POST /images` stores an upload of its bytes (refused
    /// over `maxBytes`, `server.maxUploadBytes`); true when it is new, false when already stored.
    /// Its frames are composited as an upload's are (for the seek anchors an upload keeps), so the
    /// same decode memory is reserved and the same files are refused.
    public func importFile(_ path: String, maxBytes: Int) throws(ImportRefusal) -> Bool {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ImportRefusal(status: 500, description: "cannot open \(path)") }
        defer { close(fd) }
        let upload: UploadFile
        do {
            upload = try beginUpload()
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { throw ImportRefusal(status: 500, description: "cannot read \(path)") }
                if count == 0 { break }
                guard upload.byteCount + count <= maxBytes else {
                    throw ImportRefusal(status: 413, description: "larger than server.maxUploadBytes (\(maxBytes))")
                }
                try buffer.withUnsafeBytes { try upload.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            }
        } catch let refusal as ImportRefusal {
            throw refusal
        } catch {
            throw Self.refusal(error)
        }
        do {
            return try commit(upload, visit: { _, _, _ in }).created
        } catch {
            throw Self.refusal(error)
        }
    }

    private static func refusal(_ error: any Error) -> ImportRefusal {
        guard let error = error as? StoreError else { return ImportRefusal(status: 500, description: "\(error)") }
        return switch error {
        case .unsupportedFormat(let why): ImportRefusal(status: 415, description: "unsupported image format: \(why)")
        case .undecodable(let why): ImportRefusal(status: 422, description: "the image cannot be served: \(why)")
        case .readOnly(let why): ImportRefusal(status: 409, description: why)
        case .busy(let why): ImportRefusal(status: 429, description: why)
        case .unavailable(let why): ImportRefusal(status: 503, description: "storage cannot be reached: \(why)")
        case .io(let why): ImportRefusal(status: 500, description: "the image could not be stored: \(why)")
        }
    }
}
