import CCurl
import SourceRules

#if canImport(Glibc)
import Glibc
#endif

/// One HTTP exchange of a source fetch through libcurl's C API, for one hop (redirects are
/// followed by ``SourceFetcher``, which checks each target first). The connection can only go to
/// an address that was checked: the name is pinned to the checked addresses (`CURLOPT_RESOLVE`,
/// so libcurl makes no lookup of its own), and `CURLOPT_OPENSOCKETFUNCTION` checks the address
/// libcurl is about to connect to again — policy and pinned set — and refuses to open a socket
/// otherwise, so a refused destination never sees a connection attempt.
final class CurlTransfer {
    /// What one hop ended with.
    struct Outcome {
        var status: Int
        var location: String?
        var etag: String?
        var lastModified: String?
    }

    let url: SourceURL
    let pinned: [IPAddress]
    let policy: SourcePolicy
    let maxBytes: Int
    let timeoutMilliseconds: Int
    let requestHeaders: [String]
    /// Receives the body of a 2xx answer as it arrives.
    let body: (UnsafeRawBufferPointer) throws -> Void

    // Filled by the callbacks.
    private var status = 0
    private var headers: [(name: String, value: String)] = []
    private var received = 0
    private var failure: SourceFetchFailure?

    init(
        url: SourceURL, pinned: [IPAddress], policy: SourcePolicy, maxBytes: Int, timeoutMilliseconds: Int,
        requestHeaders: [String], body: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) {
        self.url = url
        self.pinned = pinned
        self.policy = policy
        self.maxBytes = maxBytes
        self.timeoutMilliseconds = timeoutMilliseconds
        self.requestHeaders = requestHeaders
        self.body = body
    }

    /// libcurl's process-wide set-up, once, before any handle.
    static let globalInit: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    func run() throws(SourceFetchFailure) -> Outcome {
        guard Self.globalInit, let handle = curl_easy_init() else { throw .unreachable("the HTTP client cannot start") }
        defer { curl_easy_cleanup(handle) }
        var lists: [UnsafeMutablePointer<curl_slist>?] = []
        defer { for list in lists { curl_slist_free_all(list) } }
        func list(_ items: [String]) -> UnsafeMutablePointer<curl_slist>? {
            var head: UnsafeMutablePointer<curl_slist>? = nil
            for item in items { head = curl_slist_append(head, item) }
            lists.append(head)
            return head
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        flipbook_curl_set_string(handle, CURLOPT_URL, url.canonical)
        flipbook_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        flipbook_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        flipbook_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        flipbook_curl_set_string(handle, CURLOPT_PROXY, "")  // no proxy from the environment
        flipbook_curl_set_long(handle, CURLOPT_TIMEOUT_MS, max(1, timeoutMilliseconds))
        flipbook_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, max(1, timeoutMilliseconds))
        flipbook_curl_set_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maxBytes))
        flipbook_curl_set_string(handle, CURLOPT_USERAGENT, "Flipbook")
        flipbook_curl_set_list(handle, CURLOPT_HTTPHEADER, list(["Accept-Encoding: identity"] + requestHeaders))
        if case .name(let name) = url.host {
            let addresses = pinned.map(\.urlHost).joined(separator: ",")
            flipbook_curl_set_list(handle, CURLOPT_RESOLVE, list(["\(name):\(url.port):\(addresses)"]))
        }
        flipbook_curl_set_pointer(handle, CURLOPT_OPENSOCKETDATA, context)
        flipbook_curl_set_opensocket_callback(handle, Self.openSocket)
        flipbook_curl_set_pointer(handle, CURLOPT_HEADERDATA, context)
        flipbook_curl_set_data_callback(handle, CURLOPT_HEADERFUNCTION, Self.header)
        flipbook_curl_set_pointer(handle, CURLOPT_WRITEDATA, context)
        flipbook_curl_set_data_callback(handle, CURLOPT_WRITEFUNCTION, Self.write)

        let code = curl_easy_perform(handle)
        if let failure { throw failure }
        switch code {
        case CURLE_OK:
            break
        case CURLE_OPERATION_TIMEDOUT:
            throw .timedOut(Double(timeoutMilliseconds) / 1000)
        case CURLE_FILESIZE_EXCEEDED:
            throw .tooLarge(maxBytes)
        default:
            throw .unreachable(String(cString: curl_easy_strerror(code)))
        }
        return Outcome(
            status: status, location: header("Location"), etag: header("ETag"), lastModified: header("Last-Modified"))
    }

    private func header(_ name: String) -> String? {
        headers.last { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// An answer with more header fields than this is dropped (libcurl bounds each line, not
    /// their number).
    static let maxHeaderFields = 100

    static func isRedirect(_ status: Int) -> Bool { [301, 302, 303, 307, 308].contains(status) }

    // MARK: Callbacks (libcurl's thread, during curl_easy_perform)

    /// One header line; the status line starts a new answer (after a 1xx). At the end of the
    /// head of an answer whose body will be kept, refuses a `Content-Encoding` and an announced
    /// size past the limit: returning 0 makes libcurl abort, closing the connection.
    private func onHeader(_ line: String) -> Bool {
        if line.hasPrefix("HTTP/") {
            let parts = line.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            headers = []
            return true
        }
        let trimmed = line.trimming("\r\n")
        if trimmed.isEmpty {
            guard (200..<300).contains(status) else { return true }
            if let coding = header("Content-Encoding")?.trimming(" \t"), !coding.isEmpty,
                coding.lowercased() != "identity"
            {
                failure = .contentEncoding(coding)
                return false
            }
            if let length = header("Content-Length").flatMap({ Int($0.trimming(" \t")) }), length > maxBytes {
                failure = .tooLarge(maxBytes)
                return false
            }
            return true
        }
        guard headers.count < Self.maxHeaderFields else {
            failure = .unreachable("the origin sent more than \(Self.maxHeaderFields) header fields")
            return false
        }
        if let colon = trimmed.firstIndex(of: ":") {
            headers.append(
                (String(trimmed[..<colon]), String(trimmed[trimmed.index(after: colon)...]).trimming(" \t")))
        }
        return true
    }

    /// Body bytes: kept for a 2xx (cut at the limit), dropped for a redirect (bounded too); any
    /// other answer is not read at all.
    private func onBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        received += bytes.count
        if (200..<300).contains(status) {
            guard received <= maxBytes else {
                failure = .tooLarge(maxBytes)
                return false
            }
            do {
                try body(bytes)
            } catch {
                failure = .storage("\(error)")
                return false
            }
            return true
        }
        if Self.isRedirect(status) { return received <= 64 * 1024 }
        failure = .originStatus(status)
        return false
    }

    /// The connect-time check: the address libcurl is about to connect to must pass the policy
    /// and be one of those checked before the transfer started.
    private func onOpenSocket(_ address: UnsafeMutablePointer<curl_sockaddr>) -> curl_socket_t {
        let ip = withUnsafePointer(to: &address.pointee.addr) { SystemResolver.address($0) }
        guard let ip else {
            failure = .unreachable("an address of an unknown family")
            return CURL_SOCKET_BAD
        }
        do {
            try policy.check(ip)
        } catch {
            failure = .refused(error)
            return CURL_SOCKET_BAD
        }
        if !pinned.isEmpty, !pinned.contains(ip) {
            failure = .unreachable("libcurl chose an address that was not checked")
            return CURL_SOCKET_BAD
        }
        return socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
    }

    static let header: flipbook_curl_data_callback = { data, size, count, context in
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
        let length = size * count
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
        return transfer.onHeader(line) ? length : 0
    }

    static let write: flipbook_curl_data_callback = { data, size, count, context in
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
        let length = size * count
        return transfer.onBody(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
    }

    static let openSocket: flipbook_curl_opensocket_callback = { context, purpose, address in
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
        guard purpose == CURLSOCKTYPE_IPCXN, let address else { return CURL_SOCKET_BAD }
        return transfer.onOpenSocket(address)
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
