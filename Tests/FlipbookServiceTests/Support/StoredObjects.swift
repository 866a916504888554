import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService
@testable import ImageStorage

/// A backend named as `fs` or `s3` in the names of the tests it parameterizes.
extension Backend: CustomTestStringConvertible {
    public var testDescription: String { rawValue }
}

extension TestService {
    /// Where the image `id` (a content id) is kept, and whether each piece exists now: on `fs`
    /// the image's bytes and its record in the data directory; on `s3` the original and the record in
    /// the bucket (read straight from moto) and the original in the local cache.
    func storedObjects(of id: String) throws -> [(what: String, exists: Bool)] {
        switch backend {
        case .fs:
            let layout = DataLayout(dataDirectory: dataDirectory)
            return [layout.imagePath(id), layout.recordPath(id)].map {
                ($0, FileManager.default.fileExists(atPath: $0))
            }
        case .s3:
            // Asked with the service's own (signed) client: moto refuses anonymous reads.
            let client = try #require(server.store.backend as? S3Backend).client
            var found: [(what: String, exists: Bool)] = []
            for key in ["flipbook/originals/" + id, "flipbook/meta/" + id + ".json"] {
                found.append(("s3://\(bucket!)/" + key, try client.send("HeadObject", method: "HEAD", key: key).status == 200))
            }
            let cached = dataDirectory + "/originals/" + id
            if FileManager.default.fileExists(atPath: cached) { found.append((cached, true)) }
            return found
        }
    }
}
