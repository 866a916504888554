import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// File names from `Content-Disposition` (RFC 6266, `filename*` per RFC 8187): parsed, made safe
/// display names, kept in the record as `"name"` and shown in metadata and the listing; the same
/// bytes uploaded under another name keep the first.
@Suite("Display names", .ownThreads)
struct DisplayNameTests {
    @Test(arguments: [
        ("attachment; filename=\"cat.gif\"", "cat.gif"),
        ("attachment; filename=cat.gif", "cat.gif"),
        ("attachment; filename=\"a \\\"quoted\\\" name.gif\"", "a \"quoted\" name.gif"),
        ("attachment; filename=\"plain.gif\"; filename*=UTF-8''%E2%82%AC%20rates.gif", "€ rates.gif"),
        ("attachment; filename*=utf-8'en'caf%C3%A9.webp", "café.webp"),
        ("attachment; filename=\"../../etc/passwd\"", "passwd"),
        ("attachment; filename=\"C:\\\\Users\\\\me\\\\clip.png\"", "clip.png"),
        ("attachment; filename=\"tab\there\u{7}.gif\"", "tabhere.gif"),
    ])
    func parsesAndSanitises(_ header: String, _ expected: String) {
        #expect(DisplayName.from(contentDisposition: header) == expected)
    }

    @Test func refusesWhatNamesNothing() {
        #expect(DisplayName.from(contentDisposition: nil) == nil)
        #expect(DisplayName.from(contentDisposition: "inline") == nil)
        #expect(DisplayName.from(contentDisposition: "attachment; filename=\"..\"") == nil)
        #expect(DisplayName.from(contentDisposition: "attachment; filename=\"   \"") == nil)
        #expect(DisplayName.from(contentDisposition: "attachment; filename*=ISO-8859-1''x.gif") == nil)
        let long = String(repeating: "é", count: 500)
        #expect(DisplayName.from(contentDisposition: "attachment; filename=\"\(long)\"")?.count == DisplayName.maxCharacters)
    }

    @Test func uploadsKeepTheFirstNameInMetadataAndTheListing() async throws {
        let service = try TestService()
        let bytes = try Corpus.bytes("wuffs/muybridge.gif")
        let first = try service.upload(bytes, headers: ["Content-Disposition": "attachment; filename=\"horse.gif\""])
        #expect(first.status == 201 && first.json["name"] as? String == "horse.gif")
        let id = try #require(first.json["id"] as? String)
        let again = try service.upload(bytes, headers: ["Content-Disposition": "attachment; filename=\"other.gif\""])
        #expect(again.status == 200 && again.json["name"] as? String == "horse.gif")
        #expect(try service.client.get("/images/\(id)").json["name"] as? String == "horse.gif")
        let listed = try #require(service.client.get("/images").json["images"] as? [[String: Any]])
        #expect(listed.first { $0["id"] as? String == id }?["name"] as? String == "horse.gif")

        // An upload session takes the name from its PUT.
        let apng = try Corpus.bytes("wuffs/muybridge.apng")
        let session = try UploadSessionTests.createSession(service)
        let stored = try service.client.send(
            "PUT", "/uploads/\(session)", headers: ["Content-Disposition": "attachment; filename*=UTF-8''caf%C3%A9.png"],
            body: apng)
        #expect(stored.status == 201 && stored.json["name"] as? String == "café.png")
        // Without the header there is no name.
        let plain = try service.upload(try Corpus.bytes("wuffs/animated-red-blue.gif"))
        #expect(plain.status == 201 && plain.json["name"] == nil)
        await service.stop()
    }
}
