import AnimatedImage
import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService
@testable import ImageStorage

/// Records written by a build of another output revision: re-derived from the stored original
/// when loaded, written back, and served with this build's metadata; records of this revision are
/// served as stored, never re-read. On both storage backends.
@Suite("Re-indexing records of another output revision", .serialized, .ownThreads)
struct ReindexingTests {
    /// Uploads a file through a first service and stops it; returns the id, the metadata document
    /// and ETag that service served, and the data directory and bucket to start the next one on.
    func uploadedImage(_ backend: Backend) async throws -> (
        id: String, metadata: [UInt8], etag: String,
        directory: String, bucket: String?
    ) {
        let directory = TestService.temporaryDirectory()
        let first = try TestService(dataDirectory: directory, backend: backend)
        let id = try #require(try first.upload(Corpus.bytes("wuffs/muybridge.gif")).json["id"] as? String)
        let served = try first.client.get("/images/\(id)")
        #expect(served.status == 200)
        let etag = try #require(served.header("ETag"))
        let bucket = first.bucket
        await first.stop()
        return (id, served.body, etag, directory, bucket)
    }

    /// The record of `id` as storage holds it (the record file, or the S3 object).
    func storedRecord(_ service: TestService, _ id: String) throws -> [UInt8] {
        switch service.backend {
        case .fs:
            return [UInt8](
                try Data(contentsOf: URL(fileURLWithPath: DataLayout(dataDirectory: service.dataDirectory).recordPath(id))))
        case .s3:
            let client = try #require(service.server.store.backend as? S3Backend).client
            let response = try client.send("GetObject", method: "GET", key: "flipbook/meta/\(id).json")
            #expect(response.status == 200)
            return response.body
        }
    }

    /// Replaces the record of `id` in storage with `record`, as another build would have written it.
    func writeRecord(_ service: TestService, _ record: StoredImage) throws {
        let bytes = [UInt8](try record.encoded())
        switch service.backend {
        case .fs:
            // As a writer does: the listing's summary marked unknown first (then read from the
            // record), the record written.
            let backend = try #require(service.server.store.backend as? FileSystemBackend)
            try backend.index.whileWriting { try backend.index.markChanging([record.id]) }
            try Data(bytes).write(
                to: URL(fileURLWithPath: DataLayout(dataDirectory: service.dataDirectory).recordPath(record.id)))
        case .s3:
            let client = try #require(service.server.store.backend as? S3Backend).client
            let response = try client.send(
                "PutObject", method: "PUT", key: "flipbook/meta/\(record.id).json",
                body: .bytes(bytes))
            #expect(response.status == 200)
        }
    }

    /// A service on the same storage as the first (on s3 with an empty local directory).
    func nextService(_ backend: Backend, _ directory: String, _ bucket: String?) throws -> TestService {
        try TestService(
            dataDirectory: backend == .s3 ? TestService.temporaryDirectory() : directory,
            backend: backend, bucket: bucket)
    }

    @Test(arguments: Backend.allCases) func aRecordOfAnOlderRevisionIsReindexedAndServedWithCurrentMetadata(
        _ backend: Backend
    ) async throws {
        let (id, current, etag, directory, bucket) = try await uploadedImage(backend)
        #expect(etag.hasSuffix("-r\(AnimatedImage.outputRevision)\""), "\(etag)")

        // What a build before revisions were recorded left: no revision, other timing.
        var service = try nextService(backend, directory, bucket)
        var old = try StoredImage.decode(storedRecord(service, id))
        #expect(old.outputRevision == AnimatedImage.outputRevision)
        old.outputRevision = nil
        old.metadata.durationMs += 1000
        old.metadata.frames[0].rawDelayMs += 7
        try writeRecord(service, old)
        await service.stop()

        service = try nextService(backend, directory, bucket)
        let served = try service.client.get("/images/\(id)")
        #expect(served.status == 200)
        #expect(served.body == current, "served with the metadata this build derives")
        #expect(served.header("ETag") == etag)
        // A client holding the old document's tag gets the new document, not a 304.
        let revalidated = try service.client.get("/images/\(id)", headers: ["If-None-Match": "\"m-\(old.sha256.prefix(32))-r0\""])
        #expect(revalidated.status == 200)
        #expect(try service.client.get("/frames/\(id)/14").status == 200)
        // Written back: the next start (and every replica) reads the current record.
        let rewritten = try StoredImage.decode(storedRecord(service, id))
        #expect(rewritten.outputRevision == AnimatedImage.outputRevision)
        #expect(rewritten.metadata.durationMs == old.metadata.durationMs - 1000)
        #expect(rewritten.metadata.frames[0].rawDelayMs == old.metadata.frames[0].rawDelayMs - 7)
        #expect(rewritten.storedAt == old.storedAt && rewritten.sha256 == old.sha256 && rewritten.source == old.source)
        await service.stop()
    }

    @Test(arguments: Backend.allCases) func aRecordOfTheCurrentRevisionIsNotReread(_ backend: Backend) async throws {
        let (id, current, _, directory, bucket) = try await uploadedImage(backend)

        // Metadata no build would derive from the file, under the current revision: served as
        // stored, which shows the original was not indexed again.
        var service = try nextService(backend, directory, bucket)
        var record = try StoredImage.decode(storedRecord(service, id))
        record.metadata.durationMs += 1000
        try writeRecord(service, record)
        let written = try storedRecord(service, id)
        await service.stop()

        service = try nextService(backend, directory, bucket)
        let served = try service.client.get("/images/\(id)")
        #expect(served.status == 200)
        #expect(served.body != current)
        #expect(served.json["durationMs"] as? Int == record.metadata.durationMs)
        let listed = try service.client.get("/images").json["images"] as? [[String: Any]]
        #expect(listed?.first?["durationMs"] as? Int == record.metadata.durationMs)
        #expect(try storedRecord(service, id) == written, "the stored record is untouched")
        await service.stop()
    }

    /// The conditional rewrite never overwrites a record that changed after it was read.
    @Test func aRewriteOverAChangedOrDeletedRecordWritesNothing() throws {
        let directory = TestService.temporaryDirectory()
        let backend = try FileSystemBackend(dataDirectory: directory)
        let store = try ImageStore(dataDirectory: directory)
        let upload = try store.beginUpload()
        let bytes = try Corpus.bytes("wuffs/muybridge.gif")
        try bytes.withUnsafeBytes { try upload.append($0) }
        let (record, _) = try store.commit(upload, name: "clip")
        let read = try #require(try backend.fetch("clip"))
        var replaced = record
        replaced.metadata.durationMs += 1
        _ = try backend.rewrite(replaced, over: read.version)  // another replica's write
        var stale = record
        stale.metadata.durationMs += 2
        #expect(try backend.rewrite(stale, over: read.version) == nil)
        #expect(try backend.fetch("clip")?.record.metadata.durationMs == record.metadata.durationMs + 1)
        let current = try #require(try backend.fetch("clip"))
        #expect(try backend.delete(current.record))
        #expect(try backend.rewrite(stale, over: current.version) == nil)
        #expect(try backend.fetch("clip") == nil, "a deleted record is not brought back")
    }
}
