import FlipbookTestSupport
import Foundation
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// Upload sessions behind several replicas: an id minted by one replica is taken up by another
/// that shares `uploads.key` (the session lives where the proxy routes its id), and refused by
/// one with another key.
@Suite("Upload sessions across replicas", .ownThreads)
struct UploadRoutingTests {
    static let sharedKey = String(repeating: "3c", count: 32)

    static func replica(key: String, maxSessions: Int = 64) throws -> TestService {
        try TestService {
            $0.uploads.key = key
            $0.uploads.maxSessions = maxSessions
            // Long deadlines: a test held up by the rest of the suite is not an expired uploader.
            $0.uploads.startSeconds = 600
            $0.server.bodyIdleTimeoutSeconds = 600
        }
    }

    static func mint(_ service: TestService) throws -> String {
        let created = try service.client.send("POST", "/uploads")
        #expect(created.status == 201)
        return try #require(created.json["uploadId"] as? String)
    }

    @Test func aSessionMintedOnOneReplicaLivesOnAnother() async throws {
        let minter = try Self.replica(key: Self.sharedKey)
        let owner = try Self.replica(key: Self.sharedKey)
        let bytes = try Corpus.bytes(UploadSessionTests.gif)
        let id = try Self.mint(minter)

        // Before the PUT: an empty session, made on the owner by this request.
        let initial = try UploadSessionTests.progress(owner, id)
        #expect(initial.frames == 0 && initial.bytes == 0)
        let connection = try UploadSessionTests.startPut(owner, id, length: bytes.count)
        try await UploadSessionTests.sendSlice(owner, connection, id, bytes[0..<4000], total: 4000)
        let frames = try UploadSessionTests.progress(owner, id).frames
        #expect(frames > 1)
        let during = try owner.client.get("/frames/\(id)/1")
        #expect(during.status == 200 && during.header("Cache-Control") == "no-store")

        try connection.send(Array(bytes[4000...]))
        let stored = try connection.readResponse()
        #expect(stored.status == 201)
        let imageID = try #require(stored.json["id"] as? String)
        #expect(try owner.client.get("/images/\(imageID)").status == 200)
        #expect(try owner.client.get("/frames/\(imageID)/1").body == during.body)
        let alias = try owner.client.get("/uploads/\(id)")
        #expect(alias.status == 303 && alias.header("Location") == "/images/\(imageID)")
        await minter.stop()
        await owner.stop()
    }

    @Test func anotherKeyKnowsNoSuchSession() async throws {
        let minter = try Self.replica(key: Self.sharedKey)
        let stranger = try Self.replica(key: String(repeating: "c3", count: 32))
        let id = try Self.mint(minter)
        #expect(try stranger.client.get("/uploads/\(id)").status == 404)
        #expect(try stranger.client.send("PUT", "/uploads/\(id)", body: [1, 2, 3]).status == 404)
        #expect(try stranger.client.get("/frames/\(id)/0").status == 404)
        await minter.stop()
        await stranger.stop()
    }

    @Test func theStartDeadlineTravelsInTheID() async throws {
        let minter = try TestService {
            $0.uploads.key = Self.sharedKey
            $0.uploads.startSeconds = 0.3
        }
        let owner = try Self.replica(key: Self.sharedKey)
        let id = try Self.mint(minter)
        try await Task.sleep(for: .seconds(0.5))
        #expect(try owner.client.get("/uploads/\(id)").status == 404)
        #expect(try owner.client.send("PUT", "/uploads/\(id)", body: [1, 2, 3]).status == 404)
        await minter.stop()
        await owner.stop()
    }

    @Test func sessionsAreBoundedWhereTheyLive() async throws {
        let minter = try Self.replica(key: Self.sharedKey, maxSessions: 1)
        let owner = try Self.replica(key: Self.sharedKey, maxSessions: 1)
        // Minting makes no session, so the minter's one slot stays free.
        let first = try Self.mint(minter)
        let second = try Self.mint(minter)
        #expect(try owner.client.get("/uploads/\(first)").status == 200)
        let refused = try owner.client.get("/uploads/\(second)")
        #expect(refused.status == 429 && refused.header("Retry-After") != nil)
        #expect(try owner.client.get("/frames/\(second)/0").status == 429)
        // The owner is full: it says so to POST /uploads as well.
        #expect(try owner.client.send("POST", "/uploads").status == 429)
        await minter.stop()
        await owner.stop()
    }

    @Test func theKeySettingIsChecked() throws {
        var settings = FlipbookSettings()
        settings.uploads.key = "abcd"
        #expect(throws: (any Error).self) { try SettingsLoader.validate(settings) }
        settings.uploads.key = Self.sharedKey
        try SettingsLoader.validate(settings)
    }
}
