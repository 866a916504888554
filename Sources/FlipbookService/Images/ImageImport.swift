import AnimatedImage
import FrameCache
import Glibc
import HTTPServer
import ImageStorage
import Logging
import Metrics

/// Stores image files without a server (`flipbook import`): each file goes through what
/// `POST /images` does with the same bytes — the same size limit (`server.maxUploadBytes`), the
/// same verification under the same decode-memory budget, the same record under the same content
/// id, the same listing-index entry — and a file the API would refuse is refused with the API's
/// status and detail. Seek anchors (``SeekAnchors``) are not made: they are frames of a serving
/// process's cache, which an import has not.
public final class ImageImport: Sendable {
    /// A file ``importFiles(_:)`` did not store: what `POST /images` answers for the same bytes.
    public struct Refusal: Error, CustomStringConvertible {
        /// The status (413, 415, 422, 429, 409, 500, 503).
        public var status: Int
        /// The problem document's `detail`.
        public var detail: String
        public var description: String { "\(status): \(detail)" }

        /// The file's own fault (4xx but 429), not storage's or the moment's.
        public var isTheFiles: Bool { (400..<500).contains(status) && status != 429 }

        init(_ error: HTTPError) {
            status = error.status.code
            detail = error.detail
        }
    }

    let store: ImageStore
    let maxBytes: Int

    /// Opens the store `flipbook serve` opens for `settings` (the same data directory or bucket,
    /// taking the same locks, so servers may run meanwhile).
    public init(settings: FlipbookSettings, logger: Logger) throws {
        store = try ImageStore.open(
            settings: settings,
            decodeBudget: FlipbookServer.decodeBudget(for: settings, memory: MemoryLimits.detect()),
            metricsFactory: NOOPMetricsHandler.instance, logger: logger)
        maxBytes = settings.server.maxUploadBytes
    }

    /// Stores the image files at `paths` together (one flush of storage for all of them:
    /// ``ImageStore/commitAll(_:)``) and returns for each, in order, true when it is new, false
    /// when it was stored already, or the API's refusal (a 500 when the file cannot be read).
    public func importFiles(_ paths: [String]) -> [Result<Bool, Refusal>] {
        var outcomes = [Result<Bool, Refusal>?](repeating: nil, count: paths.count)
        var uploads: [UploadFile] = []
        var positions: [Int] = []
        for (position, path) in paths.enumerated() {
            do throws(Refusal) {
                uploads.append(try receive(path))
                positions.append(position)
            } catch {
                outcomes[position] = .failure(error)
            }
        }
        for (position, outcome) in zip(positions, store.commitAll(uploads)) {
            outcomes[position] = outcome.map(\.created).mapError { Refusal(ImageIngest.refusal($0)) }
        }
        return outcomes.map { $0 ?? .failure(Refusal(HTTPError(.internalServerError, detail: "Not stored."))) }
    }

    /// The file at `path` copied into an upload's temporary file (not flushed yet), within the
    /// API's size limit.
    private func receive(_ path: String) throws(Refusal) -> UploadFile {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Refusal(HTTPError(.internalServerError, detail: "Cannot open \(path).")) }
        defer { close(fd) }
        let upload: UploadFile
        do {
            upload = try store.beginUpload()
        } catch {
            throw Refusal(ImageIngest.cannotBegin(error))
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw Refusal(HTTPError(.internalServerError, detail: "Cannot read \(path).")) }
            if count == 0 { break }
            guard upload.byteCount + count <= maxBytes else { throw Refusal(HTTPError.tooLarge(maxBytes: maxBytes)) }
            do {
                try buffer.withUnsafeBytes { try upload.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            } catch {
                throw Refusal(HTTPError(.internalServerError, detail: "The image could not be stored."))
            }
        }
        return upload
    }
}
