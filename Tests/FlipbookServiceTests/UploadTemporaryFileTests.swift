import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

/// The temporary file of `POST /images` and `PUT /images/{name}` is made at the body's first
/// byte, not when the head arrives: a request refused before its body makes none (a hostile
/// client's 100 KB chunk-size line cost the server a file made and removed), while storage that
/// cannot take a file still answers 503 as it did.
@Suite("Upload temporary files", .ownThreads)
struct UploadTemporaryFileTests {
    /// The upload files in the data directory's `tmp/` now.
    static func uploadFiles(_ service: TestService) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: service.dataDirectory + "/tmp")) ?? [])
            .filter { $0.hasPrefix("upload-") }
    }

    @Test(arguments: ["POST /images", "PUT /images/a-name"])
    func aBodyRefusedBeforeItsFirstByteMakesNoFile(_ requestLine: String) async throws {
        let service = try TestService()
        let connection = try RawHTTPClient(port: service.server.port)
        try connection.send(
            "\(requestLine) HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n")
        // The 100 is sent once the route's sink is made: no file for it yet.
        #expect(try connection.readResponse().status == 100)
        #expect(Self.uploadFiles(service).isEmpty)
        try connection.send("zz\r\n")  // a malformed chunk-size line
        #expect(try connection.readResponse().status == 400)
        _ = try connection.readToEOF()
        #expect(Self.uploadFiles(service).isEmpty)
        await service.stop()
    }

    @Test func theFileIsMadeAtTheFirstByteAndTheUploadStored() async throws {
        let service = try TestService()
        let bytes = try Corpus.bytes("wuffs/muybridge.gif")
        let connection = try RawHTTPClient(port: service.server.port)
        try connection.send("POST /images HTTP/1.1\r\nHost: x\r\nContent-Length: \(bytes.count)\r\nExpect: 100-continue\r\n\r\n")
        #expect(try connection.readResponse().status == 100)
        #expect(Self.uploadFiles(service).isEmpty)
        try connection.send(Array(bytes[0..<100]))
        // Polled, not timed: the loop writes the first bytes when it gets to them.
        var files: [String] = []
        for _ in 0..<4000 {
            files = Self.uploadFiles(service)
            if !files.isEmpty { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(files.count == 1)
        try connection.send(Array(bytes[100...]))
        let stored = try connection.readResponse()
        #expect(stored.status == 201)
        #expect(Self.uploadFiles(service).isEmpty)
        await service.stop()
    }

    /// `tmp/` replaced by a plain file: no upload file can be made (whoever runs the tests).
    @Test func storageThatCannotMakeTheFileAnswers503AsBefore() async throws {
        let service = try TestService()
        let tmp = service.dataDirectory + "/tmp"
        try FileManager.default.removeItem(atPath: tmp)
        #expect(FileManager.default.createFile(atPath: tmp, contents: Data()))

        // A small body is read and answered 503; the connection stays usable.
        let connection = try RawHTTPClient(port: service.server.port)
        try connection.send("POST /images HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nGIF89a")
        let refused = try connection.readResponse()
        #expect(refused.status == 503 && refused.header("Retry-After") == "2")
        #expect(refused.header("Content-Type") == "application/problem+json")
        #expect(String(decoding: refused.body, as: UTF8.self).contains("not writable"))
        try connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try connection.readResponse().status == 200)

        // An empty body: storage refuses it too, not the emptiness.
        #expect(try service.client.send("POST", "/images", body: []).status == 503)
        let named = try service.client.send("PUT", "/images/a-name", body: Array("GIF89a".utf8))
        #expect(named.status == 503 && named.header("Retry-After") == "2")

        // A large body: answered 503 once `RefusingSink.discardLimit` bytes are in, then closed.
        let large = try RawHTTPClient(port: service.server.port)
        try large.send("POST /images HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\n\r\n")
        large.sendUntilClosed([UInt8](repeating: 0x47, count: 300_000))
        #expect(try RawHTTPClient.parse(large.readToEOF(), method: "POST").status == 503)

        // Storage back: uploads are stored.
        try FileManager.default.removeItem(atPath: tmp)
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: false)
        #expect(try service.upload(try Corpus.bytes("wuffs/muybridge.gif")).status == 201)
        await service.stop()
    }
}
