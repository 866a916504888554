import Dispatch
import FlipbookTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

@testable import HTTPServer

/// A client that pipelines and never reads its answers is paused, not buffered for: the server
/// stops parsing (and reading) its requests while its queued output is above the high-water mark,
/// serves everyone else meanwhile, and resumes when the client reads. One busy connection cannot
/// keep its loop from the others either: it gets a bounded share of each turn.
@Suite(.serialized, .ownThreads) struct BackPressureTests {
    /// 64 KiB, the same array for every answer (what a cached frame is).
    static let bigBody = pseudoRandomBytes(64 * 1024, seed: 7)

    /// `/big` (64 KiB) and `/block`, which holds the loop thread (as a slow handler would) from
    /// signalling `entered` until `release` is signalled.
    static func router(entered: DispatchSemaphore? = nil, release: DispatchSemaphore? = nil) -> Router {
        var router = liveRouter()
        router.get("/big") { _, _ in .now(HTTPResponse(status: .ok, body: BackPressureTests.bigBody)) }
        router.get("/block") { _, _ in
            entered?.signal()
            release?.wait()
            return .now(HTTPResponse(text: "unblocked"))
        }
        return router
    }

    /// Lets a client be used from a helper thread while the test waits on it.
    final class Shared: @unchecked Sendable {
        let client: RawHTTPClient
        init(_ client: RawHTTPClient) { self.client = client }
    }

    /// A socket that sends without blocking and whose receive buffer is small, so that the
    /// server's writes to it block early.
    static func nonReadingSocket(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var small: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    /// Sends as many copies of `request` as the socket takes now; returns how many went out whole
    /// (a partial last copy is completed, blocking).
    static func sendWhileAccepted(_ fd: Int32, _ request: [UInt8], atMost: Int) -> Int {
        var sent = 0
        while sent < atMost {
            let n = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n == request.count { sent += 1; continue }
            if n > 0 {
                // Finish the copy that was cut: the server must see whole requests.
                var offset = n
                while offset < request.count {
                    let m = request.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                    if m > 0 { offset += m } else { usleep(1000) }
                }
                sent += 1
            }
            break
        }
        return sent
    }

    @Test func aClientThatNeverReadsIsPausedAndAnotherIsServed() async throws {
        let high = 128 * 1024
        let low = 32 * 1024
        let hook = RecordingHook()
        try await withTestServer(
            Self.router(),
            configure: {
                $0.eventLoopThreads = 1
                $0.outputHighWaterBytes = high
                $0.outputLowWaterBytes = low
            }, hook: hook
        ) { server in
            let client = RawHTTPClient(adopting: try Self.nonReadingSocket(port: server.port))
            let fd = client.fd
            let request = Array("GET /big HTTP/1.1\r\nHost: t\r\n\r\n".utf8)
            let total = 1000  // 64 MiB of answers if the server took them all
            var sent = 0
            let paused = eventually(within: 20) {
                sent += Self.sendWhileAccepted(fd, request, atMost: total - sent)
                return server.statistics.pausedConnections == 1
            }
            #expect(paused, "the non-reading connection was never paused (sent \(sent) requests)")
            sent += Self.sendWhileAccepted(fd, request, atMost: total - sent)
            // The server stopped taking its requests: those it answered are what fit in the mark
            // and the sockets' buffers, and it holds at most the mark plus the answer that crossed it.
            let answered = hook.all.count { $0.path == "/big" }
            #expect(answered < sent / 2, "answered \(answered) of \(sent) requests of a client that does not read")
            let statistics = server.statistics
            #expect(
                statistics.peakQueuedOutputBytes <= high + Self.bigBody.count + 1024,
                "queued \(statistics.peakQueuedOutputBytes) bytes for a \(high)-byte mark")

            // Meanwhile another client on the same loop is answered.
            let other = try RawHTTPClient(port: server.port)
            try other.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try other.readResponse().text == "hello")
            #expect(server.statistics.pausedConnections == 1)
            #expect(hook.all.count { $0.path == "/big" } == answered, "the paused connection took more requests")

            // The client reads at last: every request it sent is answered, in order, and the
            // connection is no longer paused.
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            for index in 0..<sent {
                let response = try client.readResponse()
                #expect(response.status == 200 && response.body.count == Self.bigBody.count, "answer \(index)")
            }
            #expect(eventually(within: 5) { server.statistics.pausedConnections == 0 })
            #expect(server.statistics.backPressurePauses >= 1)
        }
    }

    @Test func aBusyConnectionGetsABoundedShareOfItsLoop() async throws {
        // One loop. A slow handler holds it while connection A sends thousands of pipelined
        // requests (and reads its answers as fast as they come) and then B sends one; once the
        // loop is free, B must be answered long before A's last request, although A's bytes
        // are all there to be read at once.
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let hook = RecordingHook()
        try await withTestServer(
            Self.router(entered: entered, release: release),
            configure: {
                $0.eventLoopThreads = 1
                $0.requestsPerTurn = 32
            }, hook: hook
        ) { server in
            let holder = try RawHTTPClient(port: server.port)
            try holder.send("GET /block HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(entered.wait(timeout: .now() + 10) == .success)

            let count = 1000  // about 45 KB: it fits in the socket buffers of a connection not yet accepted
            let batch = (0..<count).flatMap { Array("GET /echo-path/a\($0) HTTP/1.1\r\nHost: t\r\n\r\n".utf8) }
            let busy = Shared(try RawHTTPClient(port: server.port, timeoutSeconds: 20))
            let sent = DispatchSemaphore(value: 0)
            let read = DispatchSemaphore(value: 0)
            let answered = Atomic<Int>(0)
            Thread {
                try? busy.client.send(batch)
                sent.signal()
            }.start()
            Thread {
                for _ in 0..<count {
                    guard (try? busy.client.readResponse()) != nil else { break }
                    answered.add(1, ordering: .relaxed)
                }
                read.signal()
            }.start()
            // All of A's requests are waiting in the kernel before B connects (the server only
            // accepts again once the handler lets go).
            #expect(sent.wait(timeout: .now() + 20) == .success)
            let single = try RawHTTPClient(port: server.port)
            try single.send("GET /echo-path/b HTTP/1.1\r\nHost: t\r\n\r\n")
            release.signal()

            #expect(try holder.readResponse().text == "unblocked")
            #expect(try single.readResponse().text.hasPrefix("b|"))
            #expect(read.wait(timeout: .now() + 30) == .success)
            #expect(answered.load(ordering: .relaxed) == count)
            let order = hook.all.map(\.path)
            let position = try #require(order.firstIndex(of: "/echo-path/b"))
            let busyBefore = order[..<position].filter { $0.hasPrefix("/echo-path/a") }.count
            #expect(busyBefore < count / 10, "\(busyBefore) of the busy connection's \(count) answers came first")
        }
    }
}
