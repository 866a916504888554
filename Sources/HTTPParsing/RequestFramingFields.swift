/// What a request's framing and connection fields said: `Content-Length`, `Transfer-Encoding`,
/// `Host`, `Connection` and `Expect`, noted as the parser meets each field line.
///
/// Kept apart from the parser's byte handling because these are the rules of RFC 9112 §6 (how a
/// message body is delimited) and §9.3 (persistence): ``framing(version:)`` decides the body's
/// framing, or the error a conflicting or unsupported combination earns, once the head is whole.
struct RequestFramingFields {
    private var contentLength: Int?
    private var contentLengthInvalid = false
    private var transferEncodingSeen = false
    private var chunkedCount = 0
    private var otherCodingSeen = false
    private var chunkedNotLast = false
    private var transferEncodingEmpty = false
    private var hostCount = 0
    private var connectionClose = false
    private var connectionKeepAlive = false
    private var expectContinue = false
    private var expectOther = false

    /// Notes one field line; fields other than the five above are ignored. The five names have
    /// five different lengths, so a name is compared with the one of its length only (a browser's
    /// `User-Agent`, `Accept` and `Sec-Fetch-*` lines have framing fields' lengths).
    mutating func note(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        switch name.count {
        case 4:
            if HTTPRequestParser.nameIs(name, "host") { hostCount += 1 }
        case 6:
            guard HTTPRequestParser.nameIs(name, "expect") else { return }
            if HTTPRequestParser.nameIs(value, "100-continue") { expectContinue = true } else { expectOther = true }
        case 10:
            guard HTTPRequestParser.nameIs(name, "connection") else { return }
            HTTPRequestParser.forEachListElement(value) { token in
                if HTTPRequestParser.nameIs(token, "close") { connectionClose = true }
                if HTTPRequestParser.nameIs(token, "keep-alive") { connectionKeepAlive = true }
            }
        case 14:
            if HTTPRequestParser.nameIs(name, "content-length") { noteContentLength(value) }
        case 17:
            if HTTPRequestParser.nameIs(name, "transfer-encoding") { noteTransferEncoding(value) }
        default:
            return
        }
    }

    /// The body's framing for a request of `version`, or why the head is refused.
    func framing(version: HTTPVersion) -> Result<HTTPBodyFraming, HTTPParseError> {
        var framing = HTTPBodyFraming.none
        if transferEncodingSeen {
            if contentLength != nil || contentLengthInvalid { return .failure(.contentLengthWithTransferEncoding) }
            if version.minor == 0 || transferEncodingEmpty { return .failure(.invalidTransferEncoding) }
            if otherCodingSeen { return .failure(.unsupportedTransferEncoding) }
            if chunkedCount != 1 || chunkedNotLast { return .failure(.invalidTransferEncoding) }
            framing = .chunked
        } else if contentLengthInvalid {
            return .failure(.invalidContentLength)
        } else if let length = contentLength, length > 0 {
            framing = .contentLength(length)
        }
        if version.minor == 1 ? hostCount != 1 : hostCount > 1 { return .failure(.invalidHost) }
        if version.minor == 1 && expectOther { return .failure(.unsupportedExpectation) }
        return .success(framing)
    }

    /// Whether the connection stays open after this request (HTTP/1.1 unless `close`; HTTP/1.0
    /// only with `keep-alive`).
    func keepAlive(version: HTTPVersion) -> Bool {
        !connectionClose && (version.minor == 1 || connectionKeepAlive)
    }

    /// Whether the client waits for `100 Continue` before sending the body.
    func expectsContinue(version: HTTPVersion, framing: HTTPBodyFraming) -> Bool {
        version.minor == 1 && expectContinue && framing != .none
    }

    private mutating func noteContentLength(_ value: UnsafeRawBufferPointer) {
        var sawElement = false
        HTTPRequestParser.forEachListElement(value, keepEmpty: true) { element in
            sawElement = true
            guard !element.isEmpty, element.count <= 18 else { contentLengthInvalid = true; return }
            var parsed = 0
            for byte in element {
                let digit = byte &- 0x30
                guard digit < 10 else { contentLengthInvalid = true; return }
                parsed = parsed * 10 + Int(digit)
            }
            if let existing = contentLength, existing != parsed { contentLengthInvalid = true }
            contentLength = parsed
        }
        if !sawElement { contentLengthInvalid = true }
    }

    private mutating func noteTransferEncoding(_ value: UnsafeRawBufferPointer) {
        transferEncodingSeen = true
        var elements = 0
        HTTPRequestParser.forEachListElement(value) { coding in
            elements += 1
            if chunkedCount > 0 { chunkedNotLast = true }
            if HTTPRequestParser.nameIs(coding, "chunked") { chunkedCount += 1 } else { otherCodingSeen = true }
        }
        if elements == 0 { transferEncodingEmpty = true }
    }
}
