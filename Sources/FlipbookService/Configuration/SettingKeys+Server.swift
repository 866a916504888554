extension SettingKeys {
    /// `server.*`: the listening socket, connections, HTTP limits and timeouts, proxies and CORS.
    static let server: [Key] = [
        Key(name: "server.host", kind: .string(\.server.host), summary: "listen address"),
        Key(name: "server.port", kind: .int(\.server.port), summary: "listen port (0 = any free port)"),
        Key(
            name: "server.eventLoopThreads", kind: .int(\.server.eventLoopThreads),
            summary: """
                epoll loops; 0 = one per CPU the process may use: the container's cgroup quota (`cpu.max`) and the \
                affinity mask, not the host's cores
                """),
        Key(
            name: "server.maxConnections", kind: .int(\.server.maxConnections),
            summary: "open connections at once; beyond it new connections are refused cleanly"),
        Key(
            name: "server.maxRequestLineBytes", kind: .int(\.server.maxRequestLineBytes),
            summary: "the longest request line; longer → 414"),
        Key(
            name: "server.maxHeaderBytes", kind: .int(\.server.maxHeaderBytes),
            summary: "the largest header section; more → 431"),
        Key(
            name: "server.maxHeaderFields", kind: .int(\.server.maxHeaderFields),
            summary: "the most header fields in a request; more → 431"),
        Key(
            name: "server.maxUploadBytes", kind: .int(\.server.maxUploadBytes),
            summary: "the largest upload; larger → 413 (from `Content-Length` before reading, and while reading chunks)"),
        Key(
            name: "server.headerTimeoutSeconds", kind: .double(\.server.headerTimeoutSeconds),
            summary: "the whole header section must arrive within it, else 408 and close"),
        Key(
            name: "server.bodyIdleTimeoutSeconds", kind: .double(\.server.bodyIdleTimeoutSeconds),
            summary: "a body that makes no progress this long → 408"),
        Key(
            name: "server.keepAliveTimeoutSeconds", kind: .double(\.server.keepAliveTimeoutSeconds),
            summary: "idle keep-alive connections are closed after it"),
        Key(
            name: "server.drainTimeoutSeconds", kind: .double(\.server.drainTimeoutSeconds),
            summary: "on SIGTERM/SIGINT: finish in-flight requests within it, then exit"),
        Key(
            name: "server.instanceName", kind: .string(\.server.instanceName),
            summary: "`X-Served-By` on every response; empty = the host name"),
        Key(
            name: "server.trustedProxies", kind: .strings(\.server.trustedProxies),
            summary: "IPs/CIDRs whose `X-Forwarded-For` is believed for the logged client address"),
        Key(
            name: "server.corsOrigins", kind: .strings(\.server.corsOrigins),
            summary: """
                origins whose pages may call the API (`https://app.example`, or `*`); empty = no CORS headers. \
                Listed origins get `Access-Control-Allow-Origin` and `-Expose-Headers` on every response, `Vary: \
                Origin` is on every response, preflights allow `Authorization, Content-Type, If-None-Match, \
                X-Request-ID`; no credentials
                """),
    ]
}
