/// The chunked transfer coding (RFC 9112 §7.1) of ``HTTPRequestParser``: chunk-size lines with
/// their extensions, and the trailer section, byte by byte, inside the parser's limits.
extension HTTPRequestParser {
    package mutating func beginChunkLine() {
        state = .chunkSize
        chunkSizeValue = 0
        chunkSizeDigits = 0
        chunkLineBytes = 0
        chunkExtensionStarted = false
    }

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
