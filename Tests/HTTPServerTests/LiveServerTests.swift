import Dispatch
import FlipbookTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

@testable import HTTPServer

/// A real server on an ephemeral loopback port, talked to with a raw socket client and `curl`.
/// Serialized: the machine may have two cores, and timing-sensitive cases (timeouts, drain)
/// should not compete with each other.
@Suite(.serialized, .ownThreads) struct LiveServerTests {
    // MARK: - Keep-alive, pipelining, HEAD, HTTP/1.0

    @Test func keepAliveReusesOneConnection() async throws {
        try await withTestServer(liveRouter()) { server in
            let client = try RawHTTPClient(port: server.port)
            var connections: Set<String> = []
            for number in 1...5 {
                try client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.status == 200)
                #expect(response.text == "hello")
                #expect(response.header("Connection") == nil)
                #expect(response.header("X-Request-Number") == "\(number)")
                #expect(response.header("Server") == "Flipbook")
                #expect(response.header("Date")?.hasSuffix(" GMT") == true)
                connections.insert(response.header("X-Connection") ?? "?")
            }
            #expect(connections.count == 1)

            // curl fetching two URLs in one run reuses its connection (one connect in total).
            let url = "http://127.0.0.1:\(server.port)/hello"
            let curl = try runCurl(["-sS", "-w", " connects=%{num_connects}\\n", url, url])
            #expect(curl.status == 0, "\(curl.stderr)")
            #expect(curl.stdout == "hello connects=1\nhello connects=0\n")
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await withTestServer(liveRouter()) { server in
            let client = try RawHTTPClient(port: server.port)
            // One write with five requests. /later/300 is answered from another thread long after
            // /later/20 (which comes later on the connection); the order on the wire must not change.
            try client.send(
                "GET /later/300 HTTP/1.1\r\nHost: t\r\n\r\n"
                    + "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"
                    + "GET /later/20 HTTP/1.1\r\nHost: t\r\n\r\n"
                    + "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc"
                    + "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            let bodies = try (0..<5).map { _ in try client.readResponse().text }
            #expect(bodies == ["later 300", "hello", "later 20", "3 \(fnv1a(Array("abc".utf8)))", "hello"])
        }
    }

    @Test func manyPipelinedRequestsBeyondTheBufferAreAllAnswered() async throws {
        // More pipelined requests than the read buffer and the in-flight limit hold at once: the
        // server must stop reading, answer, and resume reading without losing or reordering any.
        try await withTestServer(
            liveRouter(),
            configure: {
                $0.readBufferBytes = 1024
                $0.maxPipelinedRequests = 4
            }
        ) { server in
            let client = try RawHTTPClient(port: server.port)
            var batch = ""
            for index in 0..<200 {
                batch +=
                    index % 7 == 0
                    ? "GET /later/\(index % 3) HTTP/1.1\r\nHost: t\r\n\r\n"
                    : "GET /echo-path/\(index) HTTP/1.1\r\nHost: t\r\n\r\n"
            }
            try client.send(batch)
            for index in 0..<200 {
                let response = try client.readResponse()
                let expected = index % 7 == 0 ? "later \(index % 3)" : "\(index)|/echo-path/\(index)|"
                #expect(response.text == expected, "response \(index)")
            }
        }
    }

    @Test func headHasTheHeadOfGetWithoutABody() async throws {
        try await withTestServer(liveRouter()) { server in
            let client = try RawHTTPClient(port: server.port)
            try client.send("HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\nGET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            let head = try client.readResponse(head: true)
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "5")
            #expect(head.header("Content-Type") == "text/plain; charset=utf-8")
            // Had the HEAD answer carried a body, these bytes would be read as the next status line.
            let get = try client.readResponse()
            #expect(get.status == 200)
            #expect(get.text == "hello")
            #expect(get.header("X-Request-Number") == "2")

            let curl = try runCurl(["-sS", "-I", "http://127.0.0.1:\(server.port)/hello"])
            #expect(curl.status == 0, "\(curl.stderr)")
            #expect(curl.stdout.contains("Content-Length: 5"))
        }
    }

    @Test func http10ClosesUnlessKeepAliveIsAsked() async throws {
        try await withTestServer(liveRouter()) { server in
            let plain = try RawHTTPClient(port: server.port)
            try plain.send("GET /hello HTTP/1.0\r\n\r\n")
            let response = try plain.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "hello")
            #expect(response.header("Connection") == "close")
            #expect(try plain.readsEOF())

            let kept = try RawHTTPClient(port: server.port)
            try kept.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            let first = try kept.readResponse()
            #expect(first.header("Connection") == "keep-alive")
            try kept.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            let second = try kept.readResponse()
            #expect(second.header("X-Request-Number") == "2")
            try kept.send("GET /hello HTTP/1.0\r\n\r\n")
            #expect(try kept.readResponse().header("Connection") == "close")
            #expect(try kept.readsEOF())

            let curl = try runCurl(["-sS", "--http1.0", "http://127.0.0.1:\(server.port)/hello"])
            #expect(curl.status == 0, "\(curl.stderr)")
            #expect(curl.stdout == "hello")
        }
    }

    @Test func http11ConnectionCloseIsHonoured() async throws {
        try await withTestServer(liveRouter()) { server in
            let client = try RawHTTPClient(port: server.port)
            try client.send("GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\nGET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.header("Connection") == "close")
            #expect(try client.readsEOF())  // the pipelined second request is not answered
        }
    }

    // MARK: - Bodies

    @Test func chunkedUploadIsStreamedAndCollected() async throws {
        try await withTestServer(liveRouter()) { server in
            let payload = pseudoRandomBytes(300_000, seed: 7)
            // Raw: chunks of varying sizes, extensions, a trailer, sent in odd-sized writes.
            var wire = Array("PUT /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
            var offset = 0
            var size = 1
            while offset < payload.count {
                let take = min(size, payload.count - offset)
                wire += Array("\(String(take, radix: 16));n=\(take)\r\n".utf8) + payload[offset..<(offset + take)] + [13, 10]
                offset += take
                size = size * 3 + 1
            }
            wire += Array("0\r\nX-Checksum: none\r\n\r\n".utf8)
            for path in ["/upload", "/echo"] {
                let client = try RawHTTPClient(port: server.port)
                var request = wire
                if path == "/echo" { request.replaceSubrange(0..<11, with: Array("POST /echo".utf8)) }
                var sent = 0
                while sent < request.count {
                    let end = min(request.count, sent + 7919)
                    try client.send(Array(request[sent..<end]))
                    sent = end
                }
                let response = try client.readResponse()
                #expect(response.status == 200, "\(path): \(response.text)")
                #expect(response.text == "\(payload.count) \(fnv1a(payload))", "\(path)")
            }

            // curl's own chunked upload.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("flipbook-chunked-\(getpid()).bin")
            try Data(payload).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let curl = try runCurl([
                "-sS", "-H", "Transfer-Encoding: chunked", "--data-binary", "@\(file.path)",
                "http://127.0.0.1:\(server.port)/echo",
            ])
            #expect(curl.status == 0, "\(curl.stderr)")
            #expect(curl.stdout == "\(payload.count) \(fnv1a(payload))")
        }
    }

    @Test func bodiesOverTheRouteLimitAre413() async throws {
        let failures = FailureLog()
        try await withTestServer(liveRouter(failures: failures)) { server in
            // Declared too large: answered at once, before any body byte is sent.
            let declared = try RawHTTPClient(port: server.port)
            try declared.send("PUT /small HTTP/1.1\r\nHost: t\r\nContent-Length: 101\r\n\r\n")
            let early = try declared.readResponse()
            #expect(early.status == 413)
            #expect(early.header("Connection") == "close")
            #expect(early.header("Content-Type") == "application/problem+json")

            // Chunked: found out while reading.
            let chunked = try RawHTTPClient(port: server.port)
            try chunked.send(
                "PUT /small HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n"
                    + String(repeating: "a", count: 64) + "\r\n40\r\n" + String(repeating: "b", count: 64) + "\r\n")
            let late = try chunked.readResponse()
            #expect(late.status == 413)
            #expect(late.header("Connection") == "close")
            #expect(try chunked.readsEOF())
            #expect(eventually(within: 10) { failures.all == [.tooLarge] }, "\(failures.all)")

            // Exactly at the limit is fine.
            let fits = try RawHTTPClient(port: server.port)
            let body = String(repeating: "c", count: 100)
            try fits.send("PUT /small HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n\(body)")
            #expect(try fits.readResponse().text == "100 \(fnv1a(Array(body.utf8)))")
        }
    }

    @Test func expectContinueWithCurlUploadsWithoutStalling() async throws {
        try await withTestServer(liveRouter()) { server in
            let payload = pseudoRandomBytes(8 << 20, seed: 42)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("flipbook-upload-\(getpid()).bin")
            try Data(payload).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            // curl waits for the interim answer before sending the body: its log shows the 100
            // Continue, and only then the final answer (without it curl would send the body after
            // --expect100-timeout and log no 100).
            let curl = try runCurl([
                "-sS", "-v", "-T", file.path, "-H", "Expect: 100-continue",
                "--expect100-timeout", "30", "http://127.0.0.1:\(server.port)/upload",
            ])
            #expect(curl.status == 0, "\(curl.stderr)")
            #expect(curl.stderr.contains("> Expect: 100-continue"))
            #expect(curl.stderr.contains("< HTTP/1.1 100 Continue"), "\(curl.stderr)")
            #expect(curl.stdout == "\(payload.count) \(fnv1a(payload))")
            let interim = curl.stderr.range(of: "< HTTP/1.1 100 Continue")
            let final = curl.stderr.range(of: "< HTTP/1.1 200")
            #expect(interim != nil && final != nil && interim!.lowerBound < final!.lowerBound, "\(curl.stderr)")
        }
    }

    @Test func expectContinueIsNotSentWhenTheBodyWillNotBeRead() async throws {
        try await withTestServer(liveRouter()) { server in
            for (request, status) in [
                ("PUT /small HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n", 413),
                ("PUT /nowhere HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", 404),
                ("PUT /small HTTP/1.1\r\nHost: t\r\nExpect: 101-upgrade\r\nContent-Length: 5\r\n\r\n", 417),
            ] {
                let client = try RawHTTPClient(port: server.port)
                try client.send(request)
                let response = try client.readResponse()
                #expect(response.status == status, "\(request)")
                #expect(response.header("Connection") == "close")
            }
            // And sent (once) when it will be, before the final answer.
            let client = try RawHTTPClient(port: server.port)
            try client.send("PUT /small HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
            let interim = try client.readResponse()
            #expect(interim.status == 100)
            try client.send("hello")
            let final = try client.readResponse()
            #expect(final.status == 200)
            #expect(final.text == "5 \(fnv1a(Array("hello".utf8)))")
        }
    }

    // MARK: - Errors, limits, timeouts

    @Test func malformedRequestsGetTheirStatusAndAClose() async throws {
        try await withTestServer(liveRouter()) { server in
            let cases: [(String, Int)] = [
                ("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: t\r\n\r\n", 414),
                ("GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + String(repeating: "b", count: 17_000) + "\r\n\r\n", 431),
                ("GET / HTTP/1.1\r\nHost: t\r\n" + (0..<101).map { "X-\($0): v\r\n" }.joined() + "\r\n", 431),
                ("GET /hello HTTP/2.0\r\nHost: t\r\n\r\n", 505),
                ("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
                ("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
                ("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400),
                ("GET /hello HTTP/1.1\r\nHost: t\r\nX: a\r\n folded\r\n\r\n", 400),
                ("GET /hello HTTP/1.1\r\nHost : t\r\n\r\n", 400),
                ("GET /hello HTTP/1.1\r\n\r\n", 400),
            ]
            for (request, status) in cases {
                let client = try RawHTTPClient(port: server.port)
                try client.send(request)
                let response = try client.readResponse()
                #expect(response.status == status, "\(request.prefix(60))")
                #expect(response.header("Connection") == "close")
                #expect(response.header("Content-Type") == "application/problem+json")
                #expect(response.text.contains("\"status\":\(status)"))
                #expect(try client.readsEOF())
            }
        }
    }

    @Test func unknownPathsAre404AndOtherMethods405WithAllow() async throws {
        try await withTestServer(liveRouter()) { server in
            let client = try RawHTTPClient(port: server.port)
            try client.send(
                "GET /missing HTTP/1.1\r\nHost: t\r\n\r\nDELETE /hello HTTP/1.1\r\nHost: t\r\n\r\nOPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n"
            )
            let notFound = try client.readResponse()
            #expect(notFound.status == 404)
            let notAllowed = try client.readResponse()
            #expect(notAllowed.status == 405)
            #expect(notAllowed.header("Allow") == "GET, HEAD")
            #expect(try client.readResponse().status == 404)  // asterisk-form reaches the router as "*"
            // The connection stays usable after error answers to complete requests.
            try client.send("GET /echo-path/a%2Fb%20c?x=1+2&y=%26 HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.readResponse().text == "a/b c|/echo-path/a/b c|x=1 2&y=&")
        }
    }

    @Test func slowHeadersAre408() async throws {
        try await withTestServer(liveRouter(), configure: { $0.headerReadTimeout = .milliseconds(300) }) { server in
            let client = try RawHTTPClient(port: server.port)
            try client.send("GET /hello HTTP/1.1\r\nHo")
            let response = try client.readResponse()
            #expect(response.status == 408)
            #expect(response.header("Connection") == "close")
            #expect(try client.readsEOF())

            // A keep-alive connection whose next head is slow gets the same treatment.
            let kept = try RawHTTPClient(port: server.port)
            try kept.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try kept.readResponse().status == 200)
            try kept.send("GET /hel")
            #expect(try kept.readResponse().status == 408)

            // A connection that never sends anything is closed quietly.
            let silent = try RawHTTPClient(port: server.port)
            #expect(try silent.readsEOF())
        }
    }

    @Test func idleKeepAliveConnectionsAreClosed() async throws {
        try await withTestServer(liveRouter(), configure: { $0.keepAliveIdleTimeout = .milliseconds(300) }) { server in
            let client = try RawHTTPClient(port: server.port)
            try client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            // Answered, the connection stays open (keep-alive) until it has idled; then it closes.
            #expect(server.openConnections == 1)
            try client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            #expect(try client.readsEOF())
            #expect(eventually(within: 10) { server.openConnections == 0 })
        }
    }

    @Test func aConnectionInUseOutlivesTheIdleTimeoutCountedFromItsOpening() async throws {
        // Requests every 20 ms for well over twice the idle timeout: the connection is never idle
        // for a whole timeout, so every request is answered on it. (It used to be closed one
        // timeout after it opened, between two requests, when each answer was written before the
        // request's end was parsed.) The clock only decides how long the client keeps going.
        try await withTestServer(liveRouter(), configure: { $0.keepAliveIdleTimeout = .seconds(3) }) { server in
            let client = try RawHTTPClient(port: server.port)
            let opened = ContinuousClock.now
            var answered = 0
            while ContinuousClock.now - opened < .seconds(8) {
                try client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.status == 200)
                guard response.status == 200 else { break }
                answered += 1
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(answered > 10)
            #expect(server.openConnections == 1)
        }
    }

    @Test func slowBodiesAre408() async throws {
        try await withTestServer(liveRouter(), configure: { $0.bodyReadIdleTimeout = .milliseconds(300) }) { server in
            let client = try RawHTTPClient(port: server.port)
            try client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
            let response = try client.readResponse()
            #expect(response.status == 408)
            #expect(response.header("Connection") == "close")
        }
    }

    @Test func connectionsBeyondTheLimitAreRefusedCleanly() async throws {
        try await withTestServer(liveRouter(), configure: { $0.maxConnections = 4 }) { server in
            var clients: [RawHTTPClient] = []
            for _ in 0..<4 {
                let client = try RawHTTPClient(port: server.port)
                try client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
                #expect(try client.readResponse().status == 200)
                clients.append(client)
            }
            for _ in 0..<3 {
                let extra = try RawHTTPClient(port: server.port)
                let refused = try extra.readResponse()
                #expect(refused.status == 503)
                #expect(refused.header("Connection") == "close")
                #expect(try extra.readsEOF())
            }
            // The admitted connections still work, and a freed slot can be taken again.
            try clients[0].send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try clients[0].readResponse().status == 200)
            clients.removeLast()
            #expect(eventually(within: 10) { server.openConnections == 3 })
            let again = try RawHTTPClient(port: server.port)
            try again.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try again.readResponse().status == 200)
        }
    }

    // MARK: - Access hook

    @Test func accessHookSeesEveryResponse() async throws {
        let hook = RecordingHook()
        try await withTestServer(liveRouter(), hook: hook) { server in
            let client = try RawHTTPClient(port: server.port)
            try client.send(
                "GET /hello HTTP/1.1\r\nHost: t\r\n\r\nHEAD /hello HTTP/1.1\r\nHost: t\r\n\r\nGET /later/30 HTTP/1.1\r\nHost: t\r\n\r\nGET /nope HTTP/1.1\r\nHost: t\r\n\r\n"
            )
            _ = try client.readResponse()
            _ = try client.readResponse(head: true)
            _ = try client.readResponse()
            _ = try client.readResponse()
        }
        let seen = hook.all
        #expect(seen.map(\.method) == [.GET, .HEAD, .GET, .GET])
        #expect(seen.map(\.route) == ["/hello", "/hello", "/later/:ms", nil])
        #expect(seen.map(\.path) == ["/hello", "/hello", "/later/30", "/nope"])
        #expect(seen.map(\.status) == [200, 200, 200, 404])
        #expect(seen.map(\.bodyBytes).prefix(3) == [5, 0, 8])
        #expect(seen.allSatisfy { $0.duration > .zero })
        // Measured from the turn that read the head to the answer: the 30 ms the handler took.
        #expect(seen[2].duration >= .milliseconds(30))
        #expect(seen.allSatisfy { $0.remoteAddress?.ip == "127.0.0.1" })
    }

    // MARK: - Graceful shutdown

    @Test func gracefulShutdownFinishesInFlightRequests() async throws {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.eventLoopThreads = 2
        let server = HTTPServer(configuration: configuration, router: liveRouter())
        try server.start()
        let port = server.port

        // Eight connections with a slow request in flight, two of them with a pipelined request
        // queued behind it, and four idle keep-alive connections.
        var busy: [RawHTTPClient] = []
        for index in 0..<8 {
            let client = try RawHTTPClient(port: port)
            try client.send(
                "GET /later/\(300 + index * 20) HTTP/1.1\r\nHost: t\r\n\r\n"
                    + (index < 2 ? "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n" : ""))
            busy.append(client)
        }
        var idle: [RawHTTPClient] = []
        for _ in 0..<4 {
            let client = try RawHTTPClient(port: port)
            try client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            idle.append(client)
        }
        #expect(eventually(within: 10) { server.openConnections == 12 })

        server.shutdown()
        #expect(server.isDraining)

        // Idle connections are closed at once.
        for client in idle { #expect(try client.readsEOF()) }
        // New connections are not accepted.
        #expect(throws: (any Error).self) { try RawHTTPClient(port: port) }

        // Every in-flight request is answered; the last response of each connection says close.
        for (index, client) in busy.enumerated() {
            let first = try client.readResponse()
            #expect(first.status == 200)
            #expect(first.text == "later \(300 + index * 20)")
            if index < 2 {
                #expect(first.header("Connection") == nil, "a response with another queued behind it keeps the connection")
                let second = try client.readResponse()
                #expect(second.text == "hello")
                #expect(second.header("Connection") == "close")
            } else {
                #expect(first.header("Connection") == "close")
            }
            #expect(try client.readsEOF())
        }
        #expect(await finishes(within: 60) { await server.waitUntilStopped() })
        #expect(server.openConnections == 0)
    }

    @Test func drainTimeoutClosesWhatDoesNotFinish() async throws {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.eventLoopThreads = 1
        configuration.drainTimeout = .seconds(2)
        var router = Router()
        let asked = Mutex(0)
        let held = Mutex<HTTPResponder?>(nil)
        router.get("/never") { _, _ in  // never answered
            asked.withLock { $0 += 1 }
            return .later
        }
        router.get("/held") { _, responder in  // answered by the test once the drain has begun
            held.withLock { $0 = responder }
            asked.withLock { $0 += 1 }
            return .later
        }
        let server = HTTPServer(configuration: configuration, router: router)
        try server.start()
        let never = try RawHTTPClient(port: server.port)
        try never.send("GET /never HTTP/1.1\r\nHost: t\r\n\r\n")
        let answered = try RawHTTPClient(port: server.port)
        try answered.send("GET /held HTTP/1.1\r\nHost: t\r\n\r\n")
        // Both requests are in flight (not merely the connections accepted) before the drain.
        #expect(eventually(within: 10) { asked.withLock { $0 } == 2 })
        server.shutdown()
        #expect(server.isDraining)
        // The drain waits for in-flight work: an answer given after it began is delivered.
        held.withLock { $0 }?.respond(HTTPResponse(text: "late"))
        #expect(try answered.readResponse().text == "late")
        #expect(try answered.readsEOF())  // and the connection is closed after it
        // What never finishes is closed, without an answer, when the drain timeout ends it.
        #expect(await finishes(within: 60) { await server.waitUntilStopped() })
        #expect(try never.readsEOF())
        #expect(server.openConnections == 0)
    }

    @Test func serviceLifecycleRunDrainsOnCancellation() async throws {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.eventLoopThreads = 1
        let server = HTTPServer(configuration: configuration, router: liveRouter())
        let task = Task { try await server.run() }
        // Wait by suspending, not by blocking: the task needs a thread of the cooperative pool,
        // which on a 2-core machine other tests may be holding.
        let deadline = Date().addingTimeInterval(60)
        while server.port == 0 && Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(server.port != 0)
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        task.cancel()
        try await task.value
        #expect(server.isDraining)
        #expect(try client.readsEOF())
    }
}
