import CCurl
import Synchronization

/// The one HTTP client of Flipbook's outbound calls — S3 and sources fetched by URL — over
/// libcurl's easy interface: TLS, HTTP/1.1 keep-alive, no proxy from the environment, no
/// cookies. Synchronous: callers are storage, decode and fetch threads, never event loops.
///
/// With `reuseConnections`, finished exchanges leave their handle (and its open connections)
/// for the next call, at most `maxIdleHandles` of them; without, every call has a handle of its
/// own, made and closed with it (the source fetcher: each hop's connection is made for the
/// addresses checked for that hop, and kept by no one).
public final class OutboundClient: Sendable {
    private let idle = Mutex<[Handle]>([])
    private let reuseConnections: Bool
    private let maxIdleHandles: Int

    /// A libcurl easy handle, used by one exchange at a time.
    private final class Handle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
        init?() {
            guard CurlExchange.globalInit, let pointer = curl_easy_init() else { return nil }
            self.pointer = pointer
        }
        deinit { curl_easy_cleanup(pointer) }
    }

    public init(reuseConnections: Bool = true, maxIdleHandles: Int = 16) {
        self.reuseConnections = reuseConnections
        self.maxIdleHandles = maxIdleHandles
    }

    /// Sends `request` with `body` (nil: none; it must stay valid until this returns) and hands the
    /// answer to `receiver` as it arrives; the final answer's status.
    public func perform(
        _ request: OutboundRequest, body: UnsafeRawBufferPointer? = nil, receiver: some OutboundReceiver
    ) throws(OutboundFailure) -> Int {
        let handle: Handle
        if reuseConnections, let kept = idle.withLock({ $0.popLast() }) {
            handle = kept
        } else {
            guard let made = Handle() else { throw .failed("the HTTP client cannot start") }
            handle = made
        }
        // A handle whose exchange failed (it may hold a broken connection) is not kept.
        let status = try CurlExchange(receiver: receiver, upload: body).run(request, on: handle.pointer)
        if reuseConnections {
            idle.withLock { if $0.count < maxIdleHandles { $0.append(handle) } }
        }
        return status
    }
}
