import FlipbookTestSupport
import Glibc
import Testing

@testable import HTTPServer

/// The read buffer, the staging buffer for heads and the queue of requests in flight pass between
/// the connections of a loop (``ConnectionSpares``): many connections on one loop, their requests
/// cut at every kind of boundary and sent a piece at a time in turn, each get their own answers,
/// in order, with nothing of another's in them.
@Suite(.serialized, .ownThreads) struct SharedBuffersTests {
    /// One client's requests and the answers they must get.
    struct Script {
        var bytes: [UInt8] = []
        var expected: [String] = []
        var sent = 0

        init(client: Int, requests: Int) {
            for index in 0..<requests {
                switch (client + index) % 4 {
                case 0:
                    // A body longer than the read buffer, different for every client and request.
                    let body = pseudoRandomBytes(500 + 700 * (index % 4), seed: UInt64(client * 1000 + index))
                    bytes += Array("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
                    expected.append("\(body.count) \(fnv1a(body))")
                case 1:
                    // Answered from another thread, so later answers wait in the queue behind it.
                    bytes += Array("GET /later/\(index % 3) HTTP/1.1\r\nHost: t\r\n\r\n".utf8)
                    expected.append("later \(index % 3)")
                default:
                    let value = "c\(client)r\(index)"
                    bytes += Array("GET /echo-path/\(value)?k=\(client) HTTP/1.1\r\nHost: t\r\n\r\n".utf8)
                    expected.append("\(value)|/echo-path/\(value)|k=\(client)")
                }
            }
        }
    }

    @Test func connectionsOfOneLoopSentInPiecesInTurnEachGetTheirOwnAnswers() async throws {
        try await withTestServer(
            liveRouter(),
            configure: {
                $0.eventLoopThreads = 1
                $0.readBufferBytes = 1024
            }
        ) { server in
            let clients = try (0..<8).map { _ in try RawHTTPClient(port: server.port) }
            var scripts = (0..<clients.count).map { Script(client: $0, requests: 24) }
            // A head left half-sent by one connection while the others go through theirs.
            let held = try RawHTTPClient(port: server.port)
            try held.send("GET /echo-path/held?k=h HTTP/1.1\r\nHo")
            let pieces = [1, 7, 64, 300, 1023, 1024, 1025, 2500, 13]
            var turn = 0
            while scripts.contains(where: { $0.sent < $0.bytes.count }) {
                for (index, client) in clients.enumerated() where scripts[index].sent < scripts[index].bytes.count {
                    let start = scripts[index].sent
                    let end = min(scripts[index].bytes.count, start + pieces[(turn + index) % pieces.count])
                    try client.send(Array(scripts[index].bytes[start..<end]))
                    scripts[index].sent = end
                    usleep(100)  // the loop takes each piece on its own, between the others'
                }
                turn += 1
            }
            try held.send("st: t\r\n\r\n")
            for (index, client) in clients.enumerated() {
                for (number, expected) in scripts[index].expected.enumerated() {
                    let response = try client.readResponse()
                    #expect(response.status == 200)
                    #expect(response.text == expected, "client \(index), answer \(number)")
                }
            }
            #expect(try held.readResponse().text == "held|/echo-path/held|k=h")
        }
    }
}
