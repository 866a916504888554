import FlipbookTestSupport
import Glibc
import Testing

@testable import HTTPServer

/// Every loop accepts from the one listening socket (`EPOLLEXCLUSIVE`), and a loop keeps what it
/// accepts unless another holds fewer: the kernel wakes whichever loop is idle, so without that
/// rule a set of keep-alive connections opened one after another can all land on one loop, and
/// one core serves them all.
@Suite("Accepting on every loop", .ownThreads)
struct AcceptingTests {
    /// Opens `count` keep-alive connections one after another (each answered before the next
    /// opens), keeps them all open, and returns how many requests each loop answered.
    func requestsPerLoop(loops: Int, connections count: Int) async throws -> [Int: Int] {
        let hook = RecordingHook(constantLines: "")
        try await withTestServer(liveRouter(), configure: { $0.eventLoopThreads = loops }, hook: hook) { server in
            var open: [RawHTTPClient] = []
            for _ in 0..<count {
                let client = try RawHTTPClient(port: server.port)
                try client.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
                #expect(try client.readResponse().status == 200)
                open.append(client)
            }
            #expect(server.openConnections == count)
        }
        return Dictionary(grouping: hook.all, by: \.loop).mapValues(\.count)
    }

    @Test(arguments: [(2, 8), (3, 9), (4, 4)])
    func keepAliveConnectionsAreSharedEvenlyBetweenTheLoops(loops: Int, connections: Int) async throws {
        let perLoop = try await requestsPerLoop(loops: loops, connections: connections)
        #expect(perLoop == Dictionary(uniqueKeysWithValues: (0..<loops).map { ($0, connections / loops) }))
    }

    @Test func oneShotConnectionsGoToTheLoopWithoutTheKeptOne() async throws {
        let hook = RecordingHook(constantLines: "")
        try await withTestServer(liveRouter(), hook: hook) { server in
            let kept = try RawHTTPClient(port: server.port)
            try kept.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try kept.readResponse().status == 200)
            for _ in 0..<20 {
                do {  // the client closes at the end of the block, so the server need not linger
                    let client = try RawHTTPClient(port: server.port)
                    try client.send("GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                    #expect(try client.readResponse().status == 200)
                    #expect(try client.readsEOF())
                }
                #expect(eventually(within: 5) { server.openConnections == 1 })
            }
            // Each closed one-shot connection was counted off its loop: one more kept connection
            // goes to the loop the first one is not on.
            let second = try RawHTTPClient(port: server.port)
            try second.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try second.readResponse().status == 200)
        }
        let loops = hook.all.map(\.loop)
        #expect(loops.count == 22)
        let first = try #require(loops.first)
        #expect(loops.dropFirst().allSatisfy { $0 != first }, "\(loops)")
    }

    /// `TCP_NODELAY` is set once, on the listening socket, and every accepted socket has it (a
    /// head and a body sent apart must not wait for an acknowledgement).
    @Test func acceptedSocketsHaveNoDelay() throws {
        let (listenFD, port) = try POSIX.listen(host: "127.0.0.1", port: 0, backlog: 8)
        defer { POSIX.closeDescriptor(listenFD) }
        let client = try RawHTTPClient(port: port)
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var accepted: Int32 = -1
        #expect(
            eventually(within: 5) {
                accepted = withUnsafeMutableBytes(of: &storage) { Epoll.accept(listenFD, $0.baseAddress!, &length) }
                return accepted >= 0
            })
        defer { POSIX.closeDescriptor(accepted) }
        var value: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(accepted, Int32(IPPROTO_TCP), TCP_NODELAY, &value, &size) == 0)
        #expect(value == 1)
        _ = client
    }
}
