/// An incremental HTTP/1.1 request parser: a pure state machine, bytes in, events out.
///
/// Feed it whatever bytes have arrived with `parse(_:)`; each call consumes a prefix of the input
/// and returns at most one event, so the caller can stop between requests (pipelining
/// back-pressure). Call again with the unconsumed rest (plus new bytes) until it returns no event
/// and consumes everything. Requests follow each other on a connection: after `.end` the parser is
/// ready for the next request head. After `.error` it stays failed and the connection should be
/// answered with `error.statusCode` and closed.
///
/// Framing follows RFC 9112: CRLF line endings only, obs-fold and whitespace before the colon
/// rejected, `Content-Length` and chunked bodies (extensions and trailers read and discarded),
/// `Content-Length` with `Transfer-Encoding` rejected, codings other than `chunked` answered 501.
public struct HTTPRequestParser: Sendable {
    /// What one call to `parse(_:)` found.
    ///
    /// No case carries a reference-counted value, so that returning, matching and dropping an
    /// event costs nothing (a head inside the event was copied and destroyed through the generic
    /// value witnesses of an optional multi-payload enum: about 2,000 instructions a request).
    public enum Event: Sendable {
        /// A complete request head: take it with ``takeHead()``.
        case head
        /// Body bytes: this range of the buffer passed to `parse(_:)` (already counted as consumed).
        case body(Range<Int>)
        /// The current request's body (and trailers) ended; the next bytes start a new request.
        case end
        /// The request is malformed; the parser stays in this state.
        case error(HTTPParseError)
    }

    @usableFromInline
    package enum State: Sendable {
        case requestLine
        case headerLines
        case endPending
        case body(remaining: Int)
        case chunkSize
        case chunkExtension
        case chunkSizeLF
        case chunkData(remaining: Int)
        case chunkDataCR
        case chunkDataLF
        case trailers
        case failed(HTTPParseError)
    }

    /// The limits this parser enforces.
    public let limits: HTTPParserLimits

    @usableFromInline package var state: State = .requestLine
    /// The bytes of the current head (request line and field lines), or of the current trailer line.
    @usableFromInline package var buffer: [UInt8] = []
    /// Where the line being collected starts in `buffer`.
    var lineStart = 0
    /// Where the header section (after the request line) starts in `buffer`.
    var headerSectionStart = 0
    var fields: [HTTPHeaders.Field] = []
    /// The index in `fields` of the head's first `If-None-Match` field, -1 before one is met.
    var ifNoneMatchIndex: Int32 = -1
    /// The request line's method, version and target (offsets in `buffer`), once parsed.
    var requestLine: (method: HTTPMethod, target: Range<Int>, version: HTTPVersion)?
    /// The offset in `buffer` of the target's first `%` (its end when it has none), with
    /// ``requestLine`` (apart, so that the optional tuple keeps its layout).
    var targetFirstEscape = 0
    /// The head announced by the last `.head` event is still to be taken (``takeHead()``): made
    /// then from the parser's buffer, fields and request line, which stay as they are until the
    /// next call to `parse`. Kept apart from ``keptHead``: a head stored as an optional was
    /// destroyed twice a request (the nil it replaced, the nil it left) through the runtime's
    /// generic witnesses of the optional, about 90 instructions each.
    private var headPending = false
    /// How the pending head's body is delimited, whether it keeps the connection and expects
    /// `100 Continue` (what ``finishHead()`` found).
    private var pendingFraming = HTTPBodyFraming.none
    private var pendingKeepAlive = false
    private var pendingExpectsContinue = false
    /// The pending head, made before parsing went on without it having been taken (not the
    /// server's way: it takes the head at once).
    private var keptHead: HTTPRequestHead?
    package var chunkSizeValue = 0
    package var chunkSizeDigits = 0
    package var chunkLineBytes = 0
    package var chunkExtensionStarted = false
    package var trailerBytes = 0
    package var trailerFields = 0

    /// What the framing and connection fields said so far.
    var framingFields = RequestFramingFields()
    /// The largest head buffer and field list kept between requests.
    private static let keptBufferBytes = 4096
    private static let keptFields = 32

    /// A parser at the start of a connection.
    public init(limits: HTTPParserLimits = HTTPParserLimits()) {
        self.limits = limits
    }

    /// Whether the parser sits between requests (no byte of a next request consumed yet).
    /// Inlined: called on a parser held by a class in another module, the getter was handed a
    /// copy of the whole parser (a `memcpy` of it before each call, three a request).
    @inlinable
    public var isIdle: Bool {
        if case .requestLine = state { return buffer.isEmpty }
        return false
    }

    /// Whether the parser has failed.
    public var hasFailed: Bool {
        if case .failed = state { return true }
        return false
    }

    /// Consumes a prefix of `input` and returns the number of bytes consumed and at most one event.
    ///
    /// A `nil` event means every byte was consumed and more input is needed.
    public mutating func parse(_ input: UnsafeRawBufferPointer) -> (consumed: Int, event: Event?) {
        if headPending { keepPendingHead() }
        var position = 0
        let count = input.count
        while true {
            switch state {
            case .failed(let error):
                return (position, .error(error))

            case .requestLine, .headerLines:
                guard position < count else { return (position, nil) }
                let (next, event) = readHead(input, from: position)
                position = next
                if let event { return (position, event) }

            case .endPending:
                resetForNextRequest()
                return (position, .end)

            case .body(let remaining), .chunkData(let remaining):
                guard position < count else { return (position, nil) }
                let take = min(remaining, count - position)
                let range = position..<(position + take)
                position += take
                bodyBytesTaken(take, of: remaining)
                return (position, .body(range))

            case .chunkSize, .chunkExtension, .chunkSizeLF:
                guard position < count else { return (position, nil) }
                let (next, error) = consumeChunkLine(input, from: position)
                position = next
                if let error { return fail(error, consumed: position) }

            case .chunkDataCR:
                guard position < count else { return (position, nil) }
                guard input[position] == 0x0D else { return fail(.invalidChunk, consumed: position + 1) }
                position += 1
                state = .chunkDataLF

            case .chunkDataLF:
                guard position < count else { return (position, nil) }
                guard input[position] == 0x0A else { return fail(.invalidChunk, consumed: position + 1) }
                position += 1
                beginChunkLine()

            case .trailers:
                guard position < count else { return (position, nil) }
                let byte = input[position]
                position += 1
                if let error = trailerByte(byte) { return fail(error, consumed: position) }
            }
        }
    }

    /// The request head completed by the `.head` event just returned, handed over once: nil when
    /// there is none or it was taken already.
    public mutating func takeHead() -> HTTPRequestHead? {
        guard headPending else { return keptHead.take() }
        headPending = false
        return makePendingHead()
    }

    /// The head ``finishHead()`` completed, made from the parser's state. It shares `buffer` and
    /// `fields` (no copy); they are emptied in place for the next request once the head is gone
    /// (``resetForNextRequest()``), so a keep-alive connection allocates neither per request. A
    /// head still held then keeps its own.
    private func makePendingHead() -> HTTPRequestHead {
        let line = requestLine.unsafelyUnwrapped
        return HTTPRequestHead(
            method: line.method,
            rawTarget: RawTarget(storage: buffer, target: line.target, firstEscape: targetFirstEscape),
            version: line.version,
            headers: HTTPHeaders(parsedStorage: buffer, fields: fields, ifNoneMatchIndex: ifNoneMatchIndex),
            framing: pendingFraming, keepAlive: pendingKeepAlive, expectsContinue: pendingExpectsContinue)
    }

    /// Makes the pending head before parsing goes on (it may change the buffer), so that it can
    /// still be taken.
    private mutating func keepPendingHead() {
        headPending = false
        keptHead = makePendingHead()
    }

    /// Convenience for tests and callers holding an array.
    public mutating func parse(_ bytes: [UInt8]) -> (consumed: Int, event: Event?) {
        bytes.withUnsafeBytes { parse($0) }
    }

    /// Moves on past `taken` of the `remaining` bytes of a `Content-Length` body or of a chunk:
    /// to the end of the request, or to the CRLF after the chunk, once none remain.
    private mutating func bodyBytesTaken(_ taken: Int, of remaining: Int) {
        let left = remaining - taken
        if case .body = state {
            state = left == 0 ? .endPending : .body(remaining: left)
        } else {
            state = left == 0 ? .chunkDataCR : .chunkData(remaining: left)
        }
    }

    // MARK: - Head

    mutating func fail(_ error: HTTPParseError, consumed: Int) -> (consumed: Int, event: Event?) {
        state = .failed(error)
        return (consumed, .error(error))
    }

    mutating func finishHead() -> Event {
        guard let line = requestLine else { return failHead(.malformedRequestLine) }
        let framing: HTTPBodyFraming
        switch framingFields.framing(version: line.version) {
        case .success(let found): framing = found
        case .failure(let error): return failHead(error)
        }
        pendingFraming = framing
        pendingKeepAlive = framingFields.keepAlive(version: line.version)
        pendingExpectsContinue = framingFields.expectsContinue(version: line.version, framing: framing)
        headPending = true
        // A head kept and never taken is replaced by this one (checked, not destroyed, when none).
        if keptHead != nil { keptHead = nil }
        switch framing {
        case .none: state = .endPending
        case .contentLength(let length): state = .body(remaining: length)
        case .chunked: beginChunkLine()
        }
        return .head
    }

    mutating func failHead(_ error: HTTPParseError) -> Event {
        state = .failed(error)
        return .error(error)
    }

    private mutating func resetForNextRequest() {
        state = .requestLine
        // Kept for the next head up to a few KiB (a browser's head fits); a larger one's memory
        // is not held by an idle connection.
        if buffer.capacity > Self.keptBufferBytes { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
        if fields.capacity > Self.keptFields { fields = [] } else { fields.removeAll(keepingCapacity: true) }
        lineStart = 0
        headerSectionStart = 0
        requestLine = nil
        framingFields = RequestFramingFields()
        ifNoneMatchIndex = -1
    }
}
