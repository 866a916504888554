@testable import HTTPServer

/// Starts a server on an ephemeral loopback port, runs `body`, and drains the server afterwards.
func withTestServer<T>(
    _ router: Router, configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    hook: (any HTTPResponseHook)? = nil,
    _ body: (HTTPServer) async throws -> T
) async throws -> T {
    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
    configuration.eventLoopThreads = 2
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, router: router, hook: hook)
    try server.start()
    do {
        let result = try await body(server)
        server.shutdown()
        await server.waitUntilStopped()
        return result
    } catch {
        server.shutdown()
        await server.waitUntilStopped()
        throw error
    }
}
