/// A response a handler gives back: status, header fields and the whole body in memory — or a
/// ``HTTPPreparedResponse`` whose head was encoded once, plus optional extra fields.
///
/// The server adds `Content-Length`, `Date`, `Server`, and `Connection` when needed; do not set
/// them yourself (for a HEAD answer whose body you did not build, you may set `Content-Length`).
/// The body array is handed to `sendmsg` as it is, so a cached `[UInt8]` is sent without a copy.
///
/// A prepared response holds its prepared answer and nothing else (no extra fields: nil), so that
/// handing it back, queueing it and destroying it retains and releases one reference, not six.
public struct HTTPResponse: Sendable {
    /// The parts of a response built from them; nil while the response is prepared.
    @usableFromInline
    struct Parts: Sendable {
        var status: HTTPStatus
        var body: [UInt8]
        var fileBody: HTTPFileBody?
    }

    /// The head encoded in advance that this response sends, if any. Exactly one of it and
    /// ``parts`` is set.
    public var prepared: HTTPPreparedResponse? { preparedAnswer }
    /// ``prepared``, stored (inlinable initializers set it).
    @usableFromInline var preparedAnswer: HTTPPreparedResponse?
    /// Status, body and file body of a response built from them.
    @usableFromInline var parts: Parts?
    /// A built response's fields, or the fields added on top of a prepared one (nil: none).
    @usableFromInline var ownFields: HTTPHeaders?

    /// The status line's code and reason. Setting it on a prepared response turns it into an
    /// ordinary one (its prepared fields move into ``headers``).
    public var status: HTTPStatus {
        get { prepared?.status ?? parts.unsafelyUnwrapped.status }
        set {
            unprepare()
            parts!.status = newValue
        }
    }
    /// Header fields to send, in order. For a prepared response: only the fields added on top of
    /// the prepared ones (see ``prepared``).
    public var headers: HTTPHeaders {
        get { ownFields ?? HTTPHeaders() }
        set { ownFields = newValue }
        _modify {
            if ownFields == nil { ownFields = HTTPHeaders() }
            yield &ownFields!
        }
    }
    /// The body bytes; ignored for HEAD requests and for 1xx, 204 and 304 responses. Setting it on
    /// a prepared response turns it into an ordinary one.
    public var body: [UInt8] {
        get { prepared?.body ?? parts.unsafelyUnwrapped.body }
        set {
            unprepare()
            parts!.body = newValue
        }
        _modify {
            unprepare()
            yield &parts!.body
        }
    }
    /// A body in a file, sent with `sendfile(2)` instead of ``body`` (no copy through user space).
    public var fileBody: HTTPFileBody? {
        get {
            if let prepared { return prepared.fileBody }
            return parts.unsafelyUnwrapped.fileBody
        }
        set {
            unprepare()
            parts!.fileBody = newValue
        }
    }

    /// A response with the given status, headers and body.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        preparedAnswer = nil
        parts = Parts(status: status, body: body, fileBody: nil)
        ownFields = headers
    }

    /// A response whose body is `fileBody`.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), fileBody: HTTPFileBody) {
        preparedAnswer = nil
        parts = Parts(status: status, body: [], fileBody: fileBody)
        ownFields = headers
    }

    /// Sends `prepared` (its encoded head and its body), with `extraHeaders` after its fields.
    /// Nothing is allocated or encoded per response beyond the extra fields. Inlinable, so that
    /// a handler's response is made where it is returned (called, it was made, copied and the
    /// first destroyed: a retain and a release of each field).
    @inlinable
    public init(_ prepared: HTTPPreparedResponse, extraHeaders: borrowing HTTPHeaders = HTTPHeaders()) {
        preparedAnswer = prepared
        parts = nil
        ownFields = extraHeaders.isEmpty ? nil : copy extraHeaders
    }

    /// The length of the body that would be sent (the file body's when there is one).
    public var bodyCount: Int {
        if let prepared { return prepared.fileBody?.count ?? prepared.body.count }
        let parts = parts.unsafelyUnwrapped
        return parts.fileBody?.count ?? parts.body.count
    }

    /// The status code (read without copying the status's reason phrase).
    var statusCode: Int { prepared?.status.code ?? parts.unsafelyUnwrapped.status.code }

    /// A response whose body is `text` in UTF-8, with `Content-Type` set.
    public init(status: HTTPStatus = .ok, text: String, contentType: String = "text/plain; charset=utf-8") {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        self.init(status: status, headers: headers, body: Array(text.utf8))
    }

    /// The value of the first field called `name`, among the prepared fields and the added ones.
    public func headerValue(_ name: String) -> String? {
        prepared?.headers[name] ?? ownFields?[name]
    }

    /// Turns a prepared response into one built from its parts: the prepared fields, then the
    /// added ones.
    private mutating func unprepare() {
        guard let prepared else { return }
        preparedAnswer = nil
        var merged = prepared.headers
        if let added = ownFields {
            for field in added { merged.add(name: field.name, value: field.value) }
        }
        ownFields = merged
        parts = Parts(status: prepared.status, body: prepared.body, fileBody: prepared.fileBody)
    }

    /// An RFC 9457 `application/problem+json` response: `type` "about:blank", `title` the
    /// status's reason phrase, `status`, and `detail`.
    public static func problem(
        _ status: HTTPStatus, detail: String,
        headers extraHeaders: HTTPHeaders = HTTPHeaders()
    ) -> HTTPResponse {
        var headers = problemHeaders
        // (`for` over no fields still boxes an iterator.)
        if !extraHeaders.isEmpty {
            for field in extraHeaders { headers.add(name: field.name, value: field.value) }
        }
        // Written as bytes: no string interpolated, concatenated and copied (every refused
        // hostile request is answered with one of these).
        var phrase = status.reasonPhrase
        var detail = detail
        var body: [UInt8] = []
        body.reserveCapacity(72 + phrase.utf8.count + detail.utf8.count)
        body.append(contentsOf: problemStart)
        phrase.withUTF8 { JSONString.appendEscaped(UnsafeRawBufferPointer($0), to: &body) }
        body.append(contentsOf: problemStatus)
        let code = status.code
        if (100...999).contains(code) {
            body.append(0x30 + UInt8(code / 100))
            body.append(0x30 + UInt8(code / 10 % 10))
            body.append(0x30 + UInt8(code % 10))
        } else {
            body.append(contentsOf: String(status.code).utf8)
        }
        body.append(contentsOf: problemDetail)
        detail.withUTF8 { JSONString.appendEscaped(UnsafeRawBufferPointer($0), to: &body) }
        body.append(contentsOf: problemEnd)
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    /// The fields every problem document starts with, and the fixed parts of its body.
    private static let problemHeaders: HTTPHeaders = ["Content-Type": "application/problem+json"]
    private static let problemStart = Array(#"{"type":"about:blank","title":""#.utf8)
    private static let problemStatus = Array(#"","status":"#.utf8)
    private static let problemDetail = Array(#","detail":""#.utf8)
    private static let problemEnd = Array(#""}"#.utf8)
}

/// A response body that lives in a file: `count` bytes of descriptor `descriptor` from `offset`,
/// sent with `sendfile(2)` — the kernel passes the socket references to the file's pages instead
/// of copying the bytes through user space. `owner` is kept alive (and with it the descriptor and
/// the bytes) until the body has been sent; the bytes must not change meanwhile.
public final class HTTPFileBody: Sendable {
    public let descriptor: Int32
    public let offset: Int
    public let count: Int
    let owner: (any AnyObject & Sendable)?

    public init(descriptor: Int32, offset: Int, count: Int, owner: (any AnyObject & Sendable)?) {
        self.descriptor = descriptor
        self.offset = offset
        self.count = count
        self.owner = owner
    }
}
