import Glibc
import OutboundHTTP

/// One S3 answer as it arrives: its status and header fields (names lower-cased), and its body —
/// in memory, or, for a download that S3 answers with 200, written to the download's file as it
/// comes (created at the end of the head; nothing is made for another status, whose body, an
/// error document, is kept in memory up to 4 KiB).
final class S3Answer: OutboundReceiver {
    private(set) var status = 0
    private(set) var headers: [String: String] = [:]
    private(set) var body: [UInt8] = []
    /// Why the answer could not be written to its file.
    private(set) var localFailure: String?
    private let file: String?
    private var descriptor: Int32 = -1

    /// Bytes of a download's error document kept.
    static let errorBodyBytes = 4096

    /// - Parameter file: where a download's 200 body goes; nil keeps every body in memory.
    init(file: String?) {
        self.file = file
    }

    func head(status: Int, headers: [(name: String, value: String)]) -> Bool {
        self.status = status
        self.headers = [:]
        for field in headers { self.headers[field.name.lowercased()] = field.value }
        body = []
        guard status == 200, let file else { return true }
        unlink(file)
        descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            localFailure = "cannot write it to \(file): \(String(cString: strerror(errno)))"
            return false
        }
        return true
    }

    func body(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard descriptor >= 0 else {
            let keep = file == nil ? bytes.count : max(0, min(bytes.count, Self.errorBodyBytes - body.count))
            body.append(contentsOf: bytes.prefix(keep))
            return true
        }
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                localFailure = "cannot write it to \(file ?? ""): \(String(cString: strerror(errno)))"
                return false
            }
            offset += written
        }
        return true
    }

    /// Closes the download's file (its bytes are the page cache's; the caller syncs what it keeps).
    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}
