/// The chunked transfer coding (RFC 9112 §7.1) of ``HTTPRequestParser``: chunk-size lines with
/// their extensions (runs of allowed bytes skipped eight at a time), and the trailer section, inside
/// the parser's limits.
extension HTTPRequestParser {
    package mutating func beginChunkLine() {
        state = .chunkSize
        chunkSizeValue = 0
        chunkSizeDigits = 0
        chunkLineBytes = 0
        chunkExtensionStarted = false
    }

    /// Consumes the chunk-size line from `input[start...]` in one pass: until the line ends, the
    /// input does, or a byte is refused — never past the byte that breaks the line's limit
    /// (``HTTPParserLimits/maxChunkLineBytes``), so an over-long line is refused after at most
    /// that many bytes, whatever the client keeps sending. An extension's run of allowed bytes is
    /// skipped eight bytes at a time. Returns where it stopped and the error, if any.
    package mutating func consumeChunkLine(_ input: UnsafeRawBufferPointer, from start: Int)
        -> (next: Int, error: HTTPParseError?)
    {
        let end = min(input.count, start + max(0, limits.maxChunkLineBytes - chunkLineBytes) + 1)
        var position = start
        while position < end {
            if case .chunkSize = state, chunkSizeValue == 0 {
                // Leading zeros add nothing to the size: skipped eight at a time.
                var skipped = 0
                while position + skipped + 8 <= end,
                    input.loadUnaligned(fromByteOffset: position + skipped, as: UInt64.self) == Self.eightZeros
                {
                    skipped += 8
                }
                chunkLineBytes += skipped
                chunkSizeDigits += skipped
                position += skipped
                if chunkLineBytes > limits.maxChunkLineBytes { return (position, .invalidChunk) }
                if position == end { break }
            }
            if case .chunkExtension = state, chunkExtensionStarted {
                // Every byte up to the CR must be a field-value byte: find the first control
                // byte (CR, a tab, or one refused) without looking at each byte alone.
                let run = UnsafeRawBufferPointer(rebasing: input[position..<end])
                let skipped = ByteSearch.firstControlByte(in: run) ?? run.count
                chunkLineBytes += skipped
                position += skipped
                if chunkLineBytes > limits.maxChunkLineBytes { return (position, .invalidChunk) }
                if position == end { break }
            }
            let byte = input[position]
            position += 1
            if let error = chunkLineByte(byte) { return (position, error) }
            switch state {
            case .chunkSize, .chunkExtension, .chunkSizeLF: continue
            default: return (position, nil)
            }
        }
        return (position, nil)
    }

    /// Eight ASCII `0` digits, as one load of them reads.
    private static let eightZeros: UInt64 = 0x3030_3030_3030_3030

    /// One byte of `chunk-size [ chunk-ext ] CRLF`.
    package mutating func chunkLineByte(_ byte: UInt8) -> HTTPParseError? {
        chunkLineBytes += 1
        if chunkLineBytes > limits.maxChunkLineBytes { return .invalidChunk }
        switch state {
        case .chunkSize:
            if let digit = ASCII.hexValue(byte) {
                // Leading zeros are allowed; the value must stay below 2^60.
                if chunkSizeValue > (Int.max >> 4) - 16 { return .invalidChunk }
                chunkSizeValue = chunkSizeValue << 4 | digit
                chunkSizeDigits += 1
                return nil
            }
            guard chunkSizeDigits > 0 else { return .invalidChunk }
            if byte == 0x0D { state = .chunkSizeLF; return nil }
            if byte == 0x3B { chunkExtensionStarted = true; state = .chunkExtension; return nil }
            if ASCII.isWhitespace(byte) { state = .chunkExtension; return nil }
            return .invalidChunk
        case .chunkExtension:
            // Extensions are tolerated and ignored; only their bytes are checked. Before the first
            // ";" only whitespace may follow the size.
            if byte == 0x0D { state = .chunkSizeLF; return nil }
            if !chunkExtensionStarted {
                if byte == 0x3B { chunkExtensionStarted = true; return nil }
                return ASCII.isWhitespace(byte) ? nil : .invalidChunk
            }
            return ASCII.isFieldValueChar(byte) ? nil : .invalidChunk
        case .chunkSizeLF:
            guard byte == 0x0A else { return .invalidChunk }
            if chunkSizeValue == 0 {
                state = .trailers
                buffer.removeAll(keepingCapacity: true)
                trailerBytes = 0
                trailerFields = 0
            } else {
                state = .chunkData(remaining: chunkSizeValue)
            }
            return nil
        default:
            return .invalidChunk
        }
    }

    /// One byte of the trailer section, which is validated like header fields and discarded.
    package mutating func trailerByte(_ byte: UInt8) -> HTTPParseError? {
        trailerBytes += 1
        if trailerBytes > limits.maxHeaderBytes { return .headerSectionTooLarge }
        guard byte == 0x0A else {
            buffer.append(byte)
            return nil
        }
        guard buffer.last == 0x0D else { return .invalidLineEnding }
        buffer.removeLast()
        if buffer.isEmpty {
            state = .endPending
            return nil
        }
        trailerFields += 1
        if trailerFields > limits.maxHeaderFields { return .headerSectionTooLarge }
        let result = buffer.withUnsafeBytes { Self.splitFieldLine($0) }
        buffer.removeAll(keepingCapacity: true)
        if case .failure(let error) = result { return error == .invalidLineEnding ? .invalidChunk : error }
        return nil
    }
}
