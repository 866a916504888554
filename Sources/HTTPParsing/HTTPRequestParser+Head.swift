/// The request head of ``HTTPRequestParser``: the request line and the field lines, read where they
/// lie in the input and copied into the parser's head buffer once per read.
extension HTTPRequestParser {
    /// Reads head lines from `input[start...]` until the head is complete (`.head`), a line is
    /// refused (`.error`) or the input ends (nil: every byte consumed, a partial line kept).
    ///
    /// A line that arrives whole is read in `input` itself; the lines read are appended to
    /// ``buffer`` in one copy, with the head's last line or at the end of the input (a line-by-line
    /// append cost about 130 instructions a line). Offsets are the buffer's: an offset in `input`
    /// plus `base`. A line begun in an earlier read is completed in the buffer first. The limits
    /// are checked at each line's end, as if it had been appended alone, so the error and the
    /// bytes consumed are those of a line-by-line reading.
    mutating func readHead(_ input: UnsafeRawBufferPointer, from start: Int) -> (consumed: Int, event: Event?) {
        var position = start
        let count = input.count
        if lineStart < buffer.count {
            let lineEnd = ByteSearch.firstOffset(of: 0x0A, in: input, range: position..<count) ?? -1
            let copyEnd = lineEnd >= 0 ? lineEnd + 1 : count
            appendToBuffer(input, position..<copyEnd)
            position = copyEnd
            if let error = headSizeError(end: buffer.count, lineStart: lineStart) { return fail(error, consumed: position) }
            guard lineEnd >= 0 else { return (position, nil) }
            if let event = completeBufferedLine() { return (position, event) }
        }
        var copyFrom = position
        var base = buffer.count - copyFrom
        while true {
            if case .headerLines = state, position < count, input[position] != 0x0D,
                let found = Self.scanFieldLine(input, from: position)
            {
                // A plain field line, found in one pass (what the general path below would find).
                let next = found.lf + 1
                if let error = headSizeError(end: next + base, lineStart: position + base) { return fail(error, consumed: next) }
                guard fields.count < limits.maxHeaderFields else { return fail(.headerSectionTooLarge, consumed: next) }
                let line = UnsafeRawBufferPointer(rebasing: input[position..<(found.lf - 1)])
                addField(
                    line, at: position + base, found.nameEnd - position, found.valueStart - position,
                    found.valueEnd - position)
                position = next
                continue
            }
            guard let lf = ByteSearch.firstOffset(of: 0x0A, in: input, range: position..<count) else {
                // The input ends inside a line (or after the last one): kept for the next read.
                lineStart = position + base
                appendToBuffer(input, copyFrom..<count)
                if let error = headSizeError(end: buffer.count, lineStart: lineStart) { return fail(error, consumed: count) }
                return (count, nil)
            }
            let next = lf + 1
            if let error = headSizeError(end: next + base, lineStart: position + base) { return fail(error, consumed: next) }
            guard lf > position, input[lf - 1] == 0x0D else { return fail(.invalidLineEnding, consumed: next) }
            let line = UnsafeRawBufferPointer(rebasing: input[position..<(lf - 1)])
            if case .requestLine = state {
                if line.isEmpty {
                    // An empty line before the request line is ignored (RFC 9112 §2.2).
                    copyFrom = next
                    base = buffer.count - copyFrom
                } else {
                    if let error = parseRequestLine(line, at: position + base) { return fail(error, consumed: next) }
                    headerSectionStart = next + base
                    state = .headerLines
                }
            } else if line.isEmpty {
                appendToBuffer(input, copyFrom..<next)
                lineStart = buffer.count
                return (next, finishHead())
            } else if let error = parseFieldLine(line, at: position + base) {
                return fail(error, consumed: next)
            }
            position = next
        }
    }

    private mutating func appendToBuffer(_ input: UnsafeRawBufferPointer, _ range: Range<Int>) {
        guard !range.isEmpty else { return }
        if buffer.capacity == 0 { buffer.reserveCapacity(Swift.max(512, range.count)) }
        buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[range]))
    }

    /// The limit broken by a head whose bytes (in the buffer's offsets) end at `end`, with the
    /// current line starting at `lineStart`, or nil.
    private func headSizeError(end: Int, lineStart: Int) -> HTTPParseError? {
        if case .requestLine = state {
            return end - lineStart > limits.maxRequestLineBytes ? .requestLineTooLong : nil
        }
        return end - headerSectionStart > limits.maxHeaderBytes ? .headerSectionTooLarge : nil
    }

    /// Handles the line begun in an earlier read that ends at the last byte of `buffer` (an LF).
    private mutating func completeBufferedLine() -> Event? {
        let lf = buffer.count - 1
        guard lf > lineStart, buffer[lf - 1] == 0x0D else { return failHead(.invalidLineEnding) }
        let start = lineStart
        lineStart = buffer.count
        if start == lf - 1 {
            guard case .requestLine = state else { return finishHead() }
            // An empty line before the request line is ignored (RFC 9112 §2.2).
            buffer.removeAll(keepingCapacity: true)
            lineStart = 0
            return nil
        }
        // Read through a second reference to the buffer, so that the parser's other fields can
        // change while its bytes are read (the buffer itself is not written here).
        let storage = buffer
        let error = storage.withUnsafeBytes { raw -> HTTPParseError? in
            let line = UnsafeRawBufferPointer(rebasing: raw[start..<(lf - 1)])
            guard case .requestLine = state else { return parseFieldLine(line, at: start) }
            return parseRequestLine(line, at: start)
        }
        if let error { return failHead(error) }
        if case .requestLine = state {
            headerSectionStart = buffer.count
            state = .headerLines
        }
        return nil
    }

    /// Parses the request line `line` (no CRLF), which starts at `offset` in the buffer.
    private mutating func parseRequestLine(_ line: UnsafeRawBufferPointer, at offset: Int) -> HTTPParseError? {
        let end = line.count
        guard let firstSpace = ByteSearch.firstOffset(of: 0x20, in: line, range: 0..<end),
            let secondSpace = ByteSearch.firstOffset(of: 0x20, in: line, range: (firstSpace + 1)..<end),
            firstSpace > 0, secondSpace > firstSpace + 1
        else { return .malformedRequestLine }
        for index in 0..<firstSpace where !ASCII.isTokenChar(line[index]) { return .invalidMethod }
        let method = HTTPMethod.from(UnsafeRawBufferPointer(rebasing: line[0..<firstSpace]))

        // Version: exactly "HTTP/" DIGIT "." DIGIT.
        let versionStart = secondSpace + 1
        guard end - versionStart == 8,
            line[versionStart] == 0x48, line[versionStart + 1] == 0x54, line[versionStart + 2] == 0x54,
            line[versionStart + 3] == 0x50, line[versionStart + 4] == 0x2F, line[versionStart + 6] == 0x2E
        else { return .malformedRequestLine }
        let major = line[versionStart + 5] &- 0x30
        let minor = line[versionStart + 7] &- 0x30
        guard major < 10, minor < 10 else { return .malformedRequestLine }
        guard major == 1, minor <= 1 else { return .unsupportedVersion }

        let targetBytes = UnsafeRawBufferPointer(rebasing: line[(firstSpace + 1)..<secondSpace])
        guard let firstPercent = RequestTarget.validated(targetBytes, method: method) else { return .invalidTarget }
        // Kept as offsets: the head carries the target as its own bytes (``RawTarget``).
        let target = (offset + firstSpace + 1)..<(offset + secondSpace)
        requestLine = (method, target, HTTPVersion(major: Int(major), minor: Int(minor)))
        targetFirstEscape = target.lowerBound + firstPercent
        return nil
    }

    /// Parses the field line `line` (no CRLF), which starts at `offset` in the buffer.
    private mutating func parseFieldLine(_ line: UnsafeRawBufferPointer, at offset: Int) -> HTTPParseError? {
        guard fields.count < limits.maxHeaderFields else { return .headerSectionTooLarge }
        switch Self.splitFieldLine(line) {
        case .success(let split):
            addField(line, at: offset, split.nameEnd, split.valueStart, split.valueEnd)
            return nil
        case .failure(let error): return error
        }
    }

    /// Adds the field of `line` (which starts at `offset` in the buffer; name and value at these
    /// offsets in it) to the field list, hands its name and value to ``framingFields``, and notes
    /// the first `If-None-Match` (``HTTPHeaders/ifNoneMatchIndex``).
    @inline(__always)
    private mutating func addField(
        _ line: UnsafeRawBufferPointer, at offset: Int, _ nameEnd: Int, _ valueStart: Int, _ valueEnd: Int
    ) {
        // Room for a browser's dozen fields at once, instead of growing the list field by field.
        if fields.capacity == 0 { fields.reserveCapacity(16) }
        fields.append(
            HTTPHeaders.Field(
                nameStart: Int32(offset), nameEnd: Int32(offset + nameEnd),
                valueStart: Int32(offset + valueStart), valueEnd: Int32(offset + valueEnd)))
        let name = UnsafeRawBufferPointer(rebasing: line[0..<nameEnd])
        let value = UnsafeRawBufferPointer(rebasing: line[valueStart..<valueEnd])
        if nameEnd == 13 {
            // `If-None-Match`'s length, which no framing field has (``RequestFramingFields``
            // reads names of 4, 6, 10, 14 and 17 bytes): compared in place, not handed on.
            if ifNoneMatchIndex < 0 && Self.isIfNoneMatch(name) { ifNoneMatchIndex = Int32(fields.count - 1) }
            return
        }
        framingFields.note(name: name, value: value)
    }

    /// Whether the 13 bytes of `name` are `If-None-Match` in any case: two overlapping words
    /// lower-cased and compared (``nameIs(_:_:)`` inlined for this one name).
    @inline(__always)
    static func isIfNoneMatch(_ name: UnsafeRawBufferPointer) -> Bool {
        let literal = UnsafeRawPointer(("if-none-match" as StaticString).utf8Start)
        return ASCII.lower(name.loadUnaligned(as: UInt64.self)) == literal.loadUnaligned(as: UInt64.self)
            && ASCII.lower(name.loadUnaligned(fromByteOffset: 5, as: UInt64.self))
                == literal.loadUnaligned(fromByteOffset: 5, as: UInt64.self)
    }

    /// The common field line at `input[start...]` read in one pass — a name of letters, digits and
    /// `-` checked eight bytes at a time, `:`, optional whitespace, a value without control bytes
    /// but tabs, CRLF — as input offsets: the name's end, the trimmed value's start and end, the
    /// LF. Nil for anything else (other name bytes, an error, a line the input does not hold
    /// whole), which the general path reads instead: a line found here is one it would read the same.
    static func scanFieldLine(_ input: UnsafeRawBufferPointer, from start: Int)
        -> (nameEnd: Int, valueStart: Int, valueEnd: Int, lf: Int)?
    {
        guard let base = input.baseAddress else { return nil }
        let count = input.count
        var index = start
        while true {
            guard index + 8 <= count else { return nil }
            let others = ASCII.nonNameBytes(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
            if others == 0 {
                index += 8
                continue
            }
            index += others.trailingZeroBitCount / 8
            break
        }
        guard index > start, input[index] == 0x3A else { return nil }
        let nameEnd = index
        index += 1
        while index < count, ASCII.isWhitespace(input[index]) { index += 1 }
        let valueStart = index
        while true {
            guard let found = ByteSearch.firstControlByte(in: UnsafeRawBufferPointer(rebasing: input[index..<count])) else {
                return nil
            }
            index += found
            if input[index] == 0x09 {
                index += 1
                continue
            }
            guard input[index] == 0x0D, index + 1 < count, input[index + 1] == 0x0A else { return nil }
            break
        }
        var valueEnd = index
        while valueEnd > valueStart, ASCII.isWhitespace(input[valueEnd - 1]) { valueEnd -= 1 }
        return (nameEnd, valueStart, valueEnd, index + 1)
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
}
