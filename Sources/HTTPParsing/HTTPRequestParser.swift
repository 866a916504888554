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
    private var lineStart = 0
    /// Where the header section (after the request line) starts in `buffer`.
    private var headerSectionStart = 0
    private var fields: [HTTPHeaders.Field] = []
    /// The index in `fields` of the head's first `If-None-Match` field, -1 before one is met.
    private var ifNoneMatchIndex: Int32 = -1
    /// The request line's method, version and target (offsets in `buffer`), once parsed.
    private var requestLine: (method: HTTPMethod, target: Range<Int>, version: HTTPVersion)?
    /// The head announced by the last `.head` event, until ``takeHead()``.
    private var completedHead: HTTPRequestHead?
    package var chunkSizeValue = 0
    package var chunkSizeDigits = 0
    package var chunkLineBytes = 0
    package var chunkExtensionStarted = false
    package var trailerBytes = 0
    package var trailerFields = 0

    /// What the framing and connection fields said so far.
    private var framingFields = RequestFramingFields()
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
        var position = 0
        let count = input.count
        while true {
            switch state {
            case .failed(let error):
                return (position, .error(error))

            case .requestLine, .headerLines:
                guard position < count else { return (position, nil) }
                // Copy up to and including the next LF into the head buffer.
                let lineEnd = ByteSearch.firstOffset(of: 0x0A, in: input, range: position..<count) ?? -1
                let copyEnd = lineEnd >= 0 ? lineEnd + 1 : count
                if buffer.capacity == 0 { buffer.reserveCapacity(512) }
                buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[position..<copyEnd]))
                position = copyEnd
                if let error = checkHeadSize() { return fail(error, consumed: position) }
                guard lineEnd >= 0 else { return (position, nil) }
                if let event = completeHeadLine() { return (position, event) }

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
        completedHead.take()
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

    private mutating func fail(_ error: HTTPParseError, consumed: Int) -> (consumed: Int, event: Event?) {
        state = .failed(error)
        return (consumed, .error(error))
    }

    private func checkHeadSize() -> HTTPParseError? {
        if case .requestLine = state {
            return buffer.count - lineStart > limits.maxRequestLineBytes ? .requestLineTooLong : nil
        }
        return buffer.count - headerSectionStart > limits.maxHeaderBytes ? .headerSectionTooLarge : nil
    }

    /// Handles the line that ends at the last byte of `buffer` (an LF).
    private mutating func completeHeadLine() -> Event? {
        let lf = buffer.count - 1
        guard lf > lineStart, buffer[lf - 1] == 0x0D else {
            state = .failed(.invalidLineEnding)
            return .error(.invalidLineEnding)
        }
        let start = lineStart
        let end = lf - 1
        lineStart = buffer.count
        if case .requestLine = state {
            if start == end {
                // An empty line before the request line is ignored (RFC 9112 §2.2).
                buffer.removeAll(keepingCapacity: true)
                lineStart = 0
                return nil
            }
            if let error = parseRequestLine(start, end) {
                state = .failed(error)
                return .error(error)
            }
            headerSectionStart = buffer.count
            state = .headerLines
            return nil
        }
        if start == end { return finishHead() }
        if let error = parseFieldLine(start, end) {
            state = .failed(error)
            return .error(error)
        }
        return nil
    }

    private mutating func parseRequestLine(_ start: Int, _ end: Int) -> HTTPParseError? {
        buffer.withUnsafeBytes { raw -> HTTPParseError? in
            guard let firstSpace = ByteSearch.firstOffset(of: 0x20, in: raw, range: start..<end),
                let secondSpace = ByteSearch.firstOffset(of: 0x20, in: raw, range: (firstSpace + 1)..<end),
                firstSpace > start, secondSpace > firstSpace + 1
            else { return .malformedRequestLine }
            for index in start..<firstSpace where !ASCII.isTokenChar(raw[index]) { return .invalidMethod }
            let method = HTTPMethod.from(UnsafeRawBufferPointer(rebasing: raw[start..<firstSpace]))

            // Version: exactly "HTTP/" DIGIT "." DIGIT.
            let versionStart = secondSpace + 1
            guard end - versionStart == 8,
                raw[versionStart] == 0x48, raw[versionStart + 1] == 0x54, raw[versionStart + 2] == 0x54,
                raw[versionStart + 3] == 0x50, raw[versionStart + 4] == 0x2F, raw[versionStart + 6] == 0x2E
            else { return .malformedRequestLine }
            let major = raw[versionStart + 5] &- 0x30
            let minor = raw[versionStart + 7] &- 0x30
            guard major < 10, minor < 10 else { return .malformedRequestLine }
            guard major == 1, minor <= 1 else { return .unsupportedVersion }

            let targetBytes = UnsafeRawBufferPointer(rebasing: raw[(firstSpace + 1)..<secondSpace])
            guard RequestTarget.isValid(targetBytes, method: method) else { return .invalidTarget }
            // Kept as offsets: the head carries the target as its own bytes (``RawTarget``).
            requestLine = (method, (firstSpace + 1)..<secondSpace, HTTPVersion(major: Int(major), minor: Int(minor)))
            return nil
        }
    }

    private mutating func parseFieldLine(_ start: Int, _ end: Int) -> HTTPParseError? {
        guard fields.count < limits.maxHeaderFields else { return .headerSectionTooLarge }
        let parsed = buffer.withUnsafeBytes { raw in
            Self.splitFieldLine(UnsafeRawBufferPointer(rebasing: raw[start..<end]))
        }
        guard case .success(let split) = parsed else {
            if case .failure(let error) = parsed { return error }
            return .invalidHeaderField
        }
        let field = HTTPHeaders.Field(
            nameStart: Int32(start), nameEnd: Int32(start + split.nameEnd),
            valueStart: Int32(start + split.valueStart),
            valueEnd: Int32(start + split.valueEnd))
        // Room for a browser's dozen fields at once, instead of growing the list field by field.
        if fields.capacity == 0 { fields.reserveCapacity(16) }
        fields.append(field)
        noteSpecialField(field, at: fields.count - 1)
        return nil
    }

    /// Splits `name: value` (no CRLF) into offsets: name end, trimmed value start and end.
    package static func splitFieldLine(_ line: UnsafeRawBufferPointer)
        -> Result<(nameEnd: Int, valueStart: Int, valueEnd: Int), HTTPParseError>
    {
        guard let first = line.first else { return .failure(.invalidHeaderField) }
        if ASCII.isWhitespace(first) { return .failure(.obsoleteLineFolding) }
        var colon = -1
        for index in 0..<line.count {
            let byte = line[index]
            if byte == 0x3A { colon = index; break }
            if !ASCII.isTokenChar(byte) {
                return .failure(byte == 0x0D ? .invalidLineEnding : .invalidHeaderField)
            }
        }
        guard colon > 0 else { return .failure(.invalidHeaderField) }
        var valueStart = colon + 1
        var valueEnd = line.count
        while valueStart < valueEnd, ASCII.isWhitespace(line[valueStart]) { valueStart += 1 }
        while valueEnd > valueStart, ASCII.isWhitespace(line[valueEnd - 1]) { valueEnd -= 1 }
        // The value's bytes checked eight at a time: only a control byte or DEL can be wrong, and
        // of those only HTAB is allowed (``ASCII/isFieldValueChar(_:)``).
        var index = valueStart
        while let found = ByteSearch.firstControlByte(in: UnsafeRawBufferPointer(rebasing: line[index..<valueEnd])) {
            let byte = line[index + found]
            guard byte == 0x09 else { return .failure(byte == 0x0D ? .invalidLineEnding : .invalidHeaderField) }
            index += found + 1
        }
        return .success((colon, valueStart, valueEnd))
    }

    /// Hands a field line's name and value to ``framingFields``, and notes where the first
    /// `If-None-Match` is (``HTTPHeaders/ifNoneMatchIndex``).
    @inline(__always)
    private mutating func noteSpecialField(_ field: HTTPHeaders.Field, at index: Int) {
        buffer.withUnsafeBytes { raw in
            let name = UnsafeRawBufferPointer(rebasing: raw[Int(field.nameStart)..<Int(field.nameEnd)])
            let value = UnsafeRawBufferPointer(rebasing: raw[Int(field.valueStart)..<Int(field.valueEnd)])
            if name.count == 13 && ifNoneMatchIndex < 0 && Self.nameIs(name, "if-none-match") {
                ifNoneMatchIndex = Int32(index)
            }
            framingFields.note(name: name, value: value)
        }
    }

    private mutating func finishHead() -> Event {
        guard let line = requestLine else { return failHead(.malformedRequestLine) }
        let framing: HTTPBodyFraming
        switch framingFields.framing(version: line.version) {
        case .success(let found): framing = found
        case .failure(let error): return failHead(error)
        }
        completedHead = HTTPRequestHead(
            method: line.method, rawTarget: RawTarget(storage: buffer, target: line.target), version: line.version,
            headers: HTTPHeaders(parsedStorage: buffer, fields: fields, ifNoneMatchIndex: ifNoneMatchIndex),
            framing: framing, keepAlive: framingFields.keepAlive(version: line.version),
            expectsContinue: framingFields.expectsContinue(version: line.version, framing: framing))
        switch framing {
        case .none: state = .endPending
        case .contentLength(let length): state = .body(remaining: length)
        case .chunked: beginChunkLine()
        }
        // The head shares `buffer` and `fields` (no copy); they are emptied in place for the next
        // request once the head is gone (``resetForNextRequest()``), so a keep-alive connection
        // allocates neither per request. A head still held then keeps its own.
        return .head
    }

    private mutating func failHead(_ error: HTTPParseError) -> Event {
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
