import FlipbookTestSupport
import Foundation
import HTTPServer
import ServiceTestSupport
import Testing

@testable import FlipbookService

/// Upload sessions with other bodies and endings: an APNG and a WebP sent chunked whose frames, as
/// renditions too, are those of the finished image; a body that stalls past the idle timeout;
/// a body over the size limit; opening a session on a server that signs uploads; `Prefer`.
@Suite("Upload session endings", .ownThreads)
struct UploadSessionEndingsTests {
    typealias Sessions = UploadSessionTests

    /// An APNG, and a WebP (whose cut prefix is indexed as the file of its complete chunks).
    @Test(arguments: ["wuffs/muybridge.apng", "image-rs-image-webp/images/animated/random_lossy.webp"])
    func aChunkedBodyServesRenditionsIdenticalToTheFinishedImage(_ input: String) async throws {
        let service = try Sessions.service()
        let bytes = try Corpus.bytes(input)
        let id = try Sessions.createSession(service)
        let connection = try RawHTTPClient(port: service.server.port, timeoutSeconds: 120)
        try connection.send("PUT /uploads/\(id) HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        func chunk(_ part: ArraySlice<UInt8>) throws {
            try connection.send(Array(String(part.count, radix: 16).utf8) + [13, 10] + Array(part) + [13, 10])
        }
        let half = bytes.count * 2 / 3
        try chunk(bytes[0..<half])
        var frames = 0
        for _ in 0..<200 {
            frames = try Sessions.progress(service, id).frames
            if frames > 0 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(frames > 0)
        let queries = ["", "?width=20&format=webp", "?width=30&format=png"]
        var served: [String: [UInt8]] = [:]
        for query in queries {
            let frame = try service.client.get("/frames/\(id)/\(frames - 1)\(query)")
            #expect(frame.status == 200 && frame.header("Cache-Control") == "no-store", "\(query)")
            #expect(frame.header("ETag")?.hasPrefix("\"u-\(id)-\(frames - 1)-") == true)
            served[query] = frame.body
        }
        try chunk(bytes[half...])
        try connection.send("0\r\n\r\n")
        let stored = try connection.readResponse()
        #expect(stored.status == 201)
        let imageID = try #require(stored.json["id"] as? String)
        for query in queries {
            #expect(try service.client.get("/frames/\(imageID)/\(frames - 1)\(query)").body == served[query], "\(query)")
        }
        await service.stop()
    }

    @Test func aStalledBodyIsCutAndItsWaitersGet410() async throws {
        let service = try TestService { $0.server.bodyIdleTimeoutSeconds = 0.5 }
        let bytes = try Corpus.bytes(Sessions.gif)
        let id = try Sessions.createSession(service)
        let connection = try Sessions.startPut(service, id, length: bytes.count)
        try connection.send(Array(bytes[0..<2000]))
        let waiter = BackgroundRequest(service, "/frames/\(id)/14", headers: ["Prefer": "wait=10"])
        #expect(try await waiter.answer().status == 410)
        #expect(try service.client.get("/uploads/\(id)").status == 410)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: service.dataDirectory + "/tmp")
        #expect(leftovers.isEmpty, "\(leftovers)")
        await service.stop()
    }

    @Test func aBodyOverTheLimitEndsTheSessionWith413() async throws {
        let service = try Sessions.service { $0.server.maxUploadBytes = 4000 }
        let bytes = try Corpus.bytes(Sessions.gif)
        let id = try Sessions.createSession(service)
        let waiter = BackgroundRequest(service, "/frames/\(id)/14", headers: ["Prefer": "wait=600"])
        try await Task.sleep(for: .milliseconds(200))
        let connection = try RawHTTPClient(port: service.server.port, timeoutSeconds: 120)
        var head = Array("PUT /uploads/\(id) HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        head += Array(String(bytes.count, radix: 16).utf8) + [13, 10] + bytes + [13, 10, 0x30, 13, 10, 13, 10]
        connection.sendUntilClosed(head)
        #expect(try connection.readResponse().status == 413)
        #expect(try await waiter.answer().status == 413)
        #expect(try service.client.get("/uploads/\(id)").status == 413)
        await service.stop()
    }

    @Test func openingASessionIsSignedWhenUploadsAre() async throws {
        let service = try TestService {
            $0.security.urlKeys = SignedRequestTests.keys
            $0.security.signedRoutes = ["uploads"]
        }
        #expect(try service.client.send("POST", "/uploads").status == 403)
        let created = try service.client.send("POST", SignedRequestTests.signer.sign("/uploads"))
        #expect(created.status == 201)
        await service.stop()
    }

    @Test func preferWaitIsReadAndCapped() throws {
        func wait(_ values: [String]) -> Double {
            var headers = HTTPHeaders()
            for value in values { headers.add(name: "Prefer", value: value) }
            let request = HTTPRequest(method: .GET, target: "/frames/x/0", headers: headers)
            return UploadFrameRoutes.preferredWait(request, cap: 10)
        }
        #expect(wait([]) == 10)
        #expect(wait(["wait=3"]) == 3)
        #expect(wait(["respond-async, WAIT = 2"]) == 2)
        #expect(wait(["return=minimal", "wait=0"]) == 0)
        #expect(wait(["wait=600"]) == 10)
        #expect(wait(["wait=-1", "wait=abc"]) == 10)
    }
}
