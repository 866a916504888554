import CCurl
import Glibc
import SourceRules

/// One outbound HTTP request, as ``OutboundClient`` sends it through libcurl.
public struct OutboundRequest: Sendable {
    public var method: String
    /// An absolute `http` or `https` URL, percent-encoded as it is to be sent.
    public var url: String
    /// `Name: value` lines sent as they are (a line `Name:` keeps libcurl from sending its own).
    public var headers: [String]
    /// The whole exchange, connecting and every byte of the answer included.
    public var timeoutMilliseconds: Int
    /// Connecting alone (at most the whole exchange's time).
    public var connectTimeoutMilliseconds: Int
    /// An exchange during which less than a byte per second moves for this long is abandoned (a
    /// stalled peer); nil: only the whole exchange's time limit.
    public var idleTimeoutSeconds: Int?
    /// A body announced or arriving larger than this is refused (libcurl's
    /// `CURLOPT_MAXFILESIZE_LARGE`); nil: no limit.
    public var maxBodyBytes: Int?
    /// Host names pinned to addresses, `host:port:address[,address…]`: libcurl makes no lookup of
    /// its own for them (`CURLOPT_RESOLVE`).
    public var resolve: [String]
    /// Whether the proxy of the environment (`https_proxy`, `http_proxy`, `no_proxy`) is used;
    /// without, the request goes to its host directly.
    public var environmentProxy: Bool

    public init(
        method: String, url: String, headers: [String] = [], timeoutMilliseconds: Int,
        connectTimeoutMilliseconds: Int? = nil, idleTimeoutSeconds: Int? = nil, maxBodyBytes: Int? = nil,
        resolve: [String] = [], environmentProxy: Bool = false
    ) {
        self.environmentProxy = environmentProxy
        self.method = method
        self.url = url
        self.headers = headers
        self.timeoutMilliseconds = timeoutMilliseconds
        self.connectTimeoutMilliseconds = min(connectTimeoutMilliseconds ?? timeoutMilliseconds, timeoutMilliseconds)
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.maxBodyBytes = maxBodyBytes
        self.resolve = resolve
    }
}

/// What receives an answer while it arrives (on the calling thread, inside
/// ``OutboundClient/perform(_:body:receiver:)``). Returning false from any method abandons the
/// exchange at once (the connection is closed); the receiver keeps its own reason.
public protocol OutboundReceiver: AnyObject {
    /// libcurl is about to connect to `address`: false refuses (no connection attempt is made).
    func connecting(to address: IPAddress) -> Bool
    /// The status line and header fields of an answer (again after a `1xx`; the last one is the
    /// final answer's), names as sent.
    func head(status: Int, headers: [(name: String, value: String)]) -> Bool
    /// Bytes of the final answer's body, in order.
    func body(_ bytes: UnsafeRawBufferPointer) -> Bool
}

extension OutboundReceiver {
    public func connecting(to address: IPAddress) -> Bool { true }
}

/// Why an exchange did not complete.
public enum OutboundFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The whole exchange, or its idle limit, ran out.
    case timedOut
    /// The body was announced or arrived larger than ``OutboundRequest/maxBodyBytes``.
    case tooLarge
    /// The receiver abandoned it (it knows why).
    case abandoned
    /// No connection, a reset, a TLS failure, a name that does not resolve: libcurl's words.
    case failed(String)

    public var description: String {
        switch self {
        case .timedOut: "timed out"
        case .tooLarge: "the body is larger than allowed"
        case .abandoned: "abandoned"
        case .failed(let why): why
        }
    }
}

/// The state of one exchange while libcurl runs it: the body to send, the answer's header lines
/// (parsed at the end of each head) and the receiver. Reached from libcurl's callbacks through an
/// unretained pointer; lives for the call to ``run(_:on:)``.
final class CurlExchange {
    private let receiver: any OutboundReceiver
    private let upload: UnsafeRawBufferPointer?
    private var uploaded = 0
    private var status = 0
    private var headers: [(name: String, value: String)] = []

    /// An answer with more header fields than this is abandoned (libcurl bounds each line, not
    /// their number).
    static let maxHeaderFields = 100

    init(receiver: any OutboundReceiver, upload: UnsafeRawBufferPointer?) {
        self.receiver = receiver
        self.upload = upload
    }

    /// libcurl's process-wide set-up, once, before any handle.
    static let globalInit: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    /// Runs `request` on `handle` (reset first: its connections are kept for reuse); the final
    /// answer's status.
    func run(_ request: OutboundRequest, on handle: UnsafeMutableRawPointer) throws(OutboundFailure) -> Int {
        curl_easy_reset(handle)
        var lists: [UnsafeMutablePointer<curl_slist>?] = []
        defer { for list in lists { curl_slist_free_all(list) } }
        func list(_ items: [String]) -> UnsafeMutablePointer<curl_slist>? {
            var head: UnsafeMutablePointer<curl_slist>? = nil
            for item in items { head = curl_slist_append(head, item) }
            lists.append(head)
            return head
        }
        setOptions(request, on: handle)
        flipbook_curl_set_list(handle, CURLOPT_HTTPHEADER, list(request.headers))
        if !request.resolve.isEmpty { flipbook_curl_set_list(handle, CURLOPT_RESOLVE, list(request.resolve)) }
        setCallbacks(on: handle)
        let code = curl_easy_perform(handle)
        if code == CURLE_OK { return status }
        if let failure { throw failure }
        switch code {
        case CURLE_OPERATION_TIMEDOUT: throw .timedOut
        case CURLE_FILESIZE_EXCEEDED: throw .tooLarge
        default: throw .failed(String(cString: curl_easy_strerror(code)))
        }
    }

    /// Why a callback stopped the exchange: the receiver's word (``OutboundFailure/abandoned``), or
    /// an answer or address this exchange does not take.
    private var failure: OutboundFailure?

    private func setOptions(_ request: OutboundRequest, on handle: UnsafeMutableRawPointer) {
        flipbook_curl_set_string(handle, CURLOPT_URL, request.url)
        flipbook_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        flipbook_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        flipbook_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        if !request.environmentProxy { flipbook_curl_set_string(handle, CURLOPT_PROXY, "") }
        flipbook_curl_set_string(handle, CURLOPT_USERAGENT, "Flipbook")
        flipbook_curl_set_long(handle, CURLOPT_TIMEOUT_MS, max(1, request.timeoutMilliseconds))
        flipbook_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, max(1, request.connectTimeoutMilliseconds))
        if let idle = request.idleTimeoutSeconds {
            flipbook_curl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1)
            flipbook_curl_set_long(handle, CURLOPT_LOW_SPEED_TIME, max(1, idle))
        }
        if let limit = request.maxBodyBytes { flipbook_curl_set_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(limit)) }
        switch request.method {
        case "GET": break
        case "HEAD": flipbook_curl_set_long(handle, CURLOPT_NOBODY, 1)
        case "PUT":
            flipbook_curl_set_long(handle, CURLOPT_UPLOAD, 1)
            flipbook_curl_set_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(upload?.count ?? 0))
        case "POST":
            flipbook_curl_set_long(handle, CURLOPT_POST, 1)
            flipbook_curl_set_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(upload?.count ?? 0))
        default: flipbook_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
        }
    }

    private func setCallbacks(on handle: UnsafeMutableRawPointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        flipbook_curl_set_pointer(handle, CURLOPT_OPENSOCKETDATA, context)
        flipbook_curl_set_opensocket_callback(handle, Self.openSocket)
        flipbook_curl_set_pointer(handle, CURLOPT_HEADERDATA, context)
        flipbook_curl_set_data_callback(handle, CURLOPT_HEADERFUNCTION, Self.header)
        flipbook_curl_set_pointer(handle, CURLOPT_WRITEDATA, context)
        flipbook_curl_set_data_callback(handle, CURLOPT_WRITEFUNCTION, Self.write)
        flipbook_curl_set_pointer(handle, CURLOPT_READDATA, context)
        flipbook_curl_set_data_callback(handle, CURLOPT_READFUNCTION, Self.read)
    }

    // MARK: Callbacks (on the calling thread, during curl_easy_perform)

    /// One header line; a status line starts a new answer (after a 1xx). The end of the head hands
    /// it to the receiver.
    private func onHeader(_ line: String) -> Bool {
        if line.hasPrefix("HTTP/") {
            let parts = line.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            headers = []
            return true
        }
        let trimmed = line.trimming("\r\n")
        if trimmed.isEmpty {
            // A 1xx is followed by the final answer's head.
            if (100..<200).contains(status) { return true }
            return keep(receiver.head(status: status, headers: headers))
        }
        guard headers.count < Self.maxHeaderFields else {
            failure = .failed("the server sent more than \(Self.maxHeaderFields) header fields")
            return false
        }
        if let colon = trimmed.firstIndex(of: ":") {
            headers.append((String(trimmed[..<colon]), String(trimmed[trimmed.index(after: colon)...]).trimming(" \t")))
        }
        return true
    }

    private func keep(_ going: Bool) -> Bool {
        if !going { failure = .abandoned }
        return going
    }

    /// The next bytes of the request body into libcurl's `buffer` (0 at its end).
    private func onRead(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let upload, uploaded < upload.count else { return 0 }
        let count = min(buffer.count, upload.count - uploaded)
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: upload[uploaded..<uploaded + count]))
        uploaded += count
        return count
    }

    private func onOpenSocket(_ address: UnsafeMutablePointer<curl_sockaddr>) -> curl_socket_t {
        guard let ip = withUnsafePointer(to: &address.pointee.addr, { SystemResolver.address($0) }) else {
            failure = .failed("an address of an unknown family")
            return CURL_SOCKET_BAD
        }
        guard keep(receiver.connecting(to: ip)) else { return CURL_SOCKET_BAD }
        return socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
    }

    static let header: flipbook_curl_data_callback = { data, size, count, context in
        let exchange = Unmanaged<CurlExchange>.fromOpaque(context!).takeUnretainedValue()
        let length = size * count
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
        return exchange.onHeader(line) ? length : 0
    }

    static let write: flipbook_curl_data_callback = { data, size, count, context in
        let exchange = Unmanaged<CurlExchange>.fromOpaque(context!).takeUnretainedValue()
        let length = size * count
        return exchange.keep(exchange.receiver.body(UnsafeRawBufferPointer(start: data, count: length))) ? length : 0
    }

    static let read: flipbook_curl_data_callback = { data, size, count, context in
        let exchange = Unmanaged<CurlExchange>.fromOpaque(context!).takeUnretainedValue()
        return exchange.onRead(UnsafeMutableRawBufferPointer(start: data, count: size * count))
    }

    static let openSocket: flipbook_curl_opensocket_callback = { context, purpose, address in
        let exchange = Unmanaged<CurlExchange>.fromOpaque(context!).takeUnretainedValue()
        guard purpose == CURLSOCKTYPE_IPCXN, let address else { return CURL_SOCKET_BAD }
        return exchange.onOpenSocket(address)
    }
}

extension String {
    fileprivate func trimming(_ set: String) -> String {
        let scalars = Set(set.unicodeScalars)
        var view = Substring(self).unicodeScalars
        while let first = view.first, scalars.contains(first) { view.removeFirst() }
        while let last = view.last, scalars.contains(last) { view.removeLast() }
        return String(view)
    }
}
