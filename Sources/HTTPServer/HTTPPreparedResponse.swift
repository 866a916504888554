/// A response encoded once and sent many times: its status line, `Content-Length` and header
/// fields are bytes ready to copy, and its body is shared, so answering with it allocates nothing
/// and encodes nothing but what changes per response — `Date`, `Server`, the response hook's lines
/// and the request id, and `Connection` when needed.
///
/// Make one for content that is served again and again (a cached frame, its `304`), keep it with
/// that content, and answer with ``HTTPResponse/init(_:extraHeaders:)``.
public final class HTTPPreparedResponse: Sendable {
    /// The status.
    public let status: HTTPStatus
    /// The header fields, as given.
    public let headers: HTTPHeaders
    /// The body (not sent for HEAD, 204 and 304).
    public let body: [UInt8]
    /// A body in a file, sent instead of ``body``.
    public let fileBody: HTTPFileBody?
    /// Status line, `Content-Length` (unless the status forbids a body) and the fields, each line
    /// ending in CRLF; the blank line is not included.
    let head: [UInt8]

    /// Appends ``head`` to `out`, copied from its bytes in place: handed to `append(contentsOf:)`
    /// as an array, it was retained for the call and released by it.
    func appendHead(to out: inout [UInt8]) { head.withUnsafeBytes { out.append(contentsOf: $0) } }

    /// Encodes the head of a response with these parts. A `Content-Length` in `headers` is
    /// replaced by the body's length (a 304 keeps one it was given).
    public convenience init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.init(Template(status: status, headers: headers, body: body), fileBody: nil)
    }

    /// The same, with a body in a file (sent with `sendfile(2)`).
    public convenience init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), fileBody: HTTPFileBody) {
        self.init(Template(status: status, headers: headers, fileBody: fileBody), fileBody: fileBody)
    }

    /// A response holding `template`'s answer (its arrays shared, not copied) with `fileBody`.
    fileprivate init(_ template: Template, fileBody: HTTPFileBody?) {
        status = template.status
        headers = template.headers
        body = template.body
        head = template.head
        self.fileBody = fileBody
    }

    /// What an allocation of `bytes` takes from glibc's heap: an 8-byte header, rounded up to
    /// 16 bytes, 32 at least.
    public static func allocatedBytes(_ bytes: Int) -> Int {
        max(32, (bytes + 8 + 15) & ~15)
    }
}

extension HTTPPreparedResponse {
    /// A prepared response's answer without the object that hands it out: its head encoded
    /// once, its fields and its body, from which ``response()`` makes objects that share them.
    ///
    /// Why: a response handed out by several event loops has its reference count written from
    /// each of their cores, so ``LoopCopies`` gives each loop its own; kept as a template, the
    /// answer needs no object besides the ones the loops answer with.
    public struct Template: Sendable {
        let status: HTTPStatus
        let headers: HTTPHeaders
        let body: [UInt8]
        /// The body in a file; each ``response()`` gets another object naming the same bytes.
        let fileBody: HTTPFileBody?
        /// Status line, `Content-Length` (unless the status forbids a body) and the fields, each
        /// line ending in CRLF; the blank line is not included.
        let head: [UInt8]

        /// Encodes the head of a response with these parts. A `Content-Length` in `headers` is
        /// replaced by the body's length (a 304 keeps one it was given).
        public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
            self.init(status: status, headers: headers, body: body, fileBody: nil)
        }

        /// The same, with a body in a file (sent with `sendfile(2)`).
        public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), fileBody: HTTPFileBody) {
            self.init(status: status, headers: headers, body: [], fileBody: fileBody)
        }

        private init(status: HTTPStatus, headers: HTTPHeaders, body: [UInt8], fileBody: HTTPFileBody?) {
            self.status = status
            self.headers = headers
            self.body = body
            self.fileBody = fileBody
            var head: [UInt8] = []
            ResponseSerializer.appendStatusAndFields(
                status: status, headers: headers, bodyCount: fileBody?.count ?? body.count,
                sendsBody: true, to: &head)
            self.head = head
        }

        /// A new response with this answer (its arrays shared; its file body, if any, another
        /// object naming the same bytes): costs ``responseBytes``.
        public func response() -> HTTPPreparedResponse {
            HTTPPreparedResponse(
                self,
                fileBody: fileBody.map {
                    HTTPFileBody(descriptor: $0.descriptor, offset: $0.offset, count: $0.count, owner: $0.owner)
                })
        }

        /// What a ``response()`` keeps on the heap: its object and its file body's.
        public var responseBytes: Int { HTTPPreparedResponse.allocatedBytes(96) + fileBodyBytes }

        /// What one file body object takes on the heap (0 without one).
        private var fileBodyBytes: Int { fileBody == nil ? 0 : HTTPPreparedResponse.allocatedBytes(48) }

        /// The heap bytes this template keeps besides its body: its encoded head and its fields
        /// (their bytes and their offsets), and its file body's object.
        public var overheadBytes: Int {
            Self.arrayBytes(head: head, headers: headers) + fileBodyBytes
        }

        /// An encoded head's and its fields' arrays, each at its capacity, each allocation as
        /// glibc's allocator rounds it (``HTTPPreparedResponse/allocatedBytes(_:)``).
        static func arrayBytes(head: [UInt8], headers: HTTPHeaders) -> Int {
            let arrayHeader = 32
            return HTTPPreparedResponse.allocatedBytes(arrayHeader + head.capacity)
                + HTTPPreparedResponse.allocatedBytes(arrayHeader + headers.storage.capacity)
                + HTTPPreparedResponse.allocatedBytes(
                    arrayHeader + headers.fields.capacity * MemoryLayout<HTTPHeaders.Field>.stride)
        }
    }
}
