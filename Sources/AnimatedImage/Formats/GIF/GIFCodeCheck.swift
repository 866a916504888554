/// Finds what giflib lets pass but Chromium does not: an LZW code that is not defined yet (above
/// the next free table entry) before the frame's pixels are complete. Chromium (Wuffs' decoder)
/// stops the frame there, so the frame is not shown; giflib makes up pixels and carries on.
///
/// A scan of the codes only, not a decode: it keeps the length of each table entry's string to
/// count pixels, and stops at the end code, at the end of the data, or once the frame is full
/// (codes after that are ignored, as Chromium ignores them).
enum GIFCodeCheck {
    /// Throws when the frame's LZW data, the sub-blocks from `start` (just after the minimum
    /// code size byte) up to `end`, uses an undefined code before `pixels` pixels are out.
    static func check(
        _ file: UnsafeBufferPointer<UInt8>, minimumCodeSize: Int, start: Int, end: Int,
        pixels: Int
    ) throws {
        let clear = 1 << minimumCodeSize
        let endCode = clear + 1
        var lengths = [UInt16](repeating: 1, count: 4096)
        try lengths.withUnsafeMutableBufferPointer { length in
            var size = minimumCodeSize + 1
            var next = clear + 2
            var previous = -1
            var produced = 0
            var accumulator: UInt32 = 0
            var bits = 0
            var block = start
            var blockEnd = start
            let limit = min(end, file.count)
            while produced < pixels {
                while bits < size {
                    if block == blockEnd {
                        guard blockEnd < limit else { return }
                        let count = Int(file[blockEnd])
                        guard count > 0 else { return }
                        block = blockEnd + 1
                        blockEnd = min(block + count, limit)
                        continue
                    }
                    accumulator |= UInt32(file[block]) << UInt32(bits)
                    block += 1
                    bits += 8
                }
                let code = Int(accumulator & ((1 << UInt32(size)) - 1))
                accumulator >>= UInt32(size)
                bits -= size
                if code == clear {
                    size = minimumCodeSize + 1
                    next = clear + 2
                    previous = -1
                    continue
                }
                if code == endCode { return }
                var count: Int
                if code < clear {
                    count = 1
                } else if code < next && code > endCode {
                    count = Int(length[code])
                } else if code == next && previous >= 0 {
                    count = Int(length[previous]) + 1
                } else {
                    throw FrameDataError(
                        "LZW code \(code) is not defined yet (the next is \(next)) after \(produced) of \(pixels) pixels")
                }
                if previous >= 0 && next < 4096 {
                    length[next] = UInt16(min(Int(UInt16.max), Int(length[previous]) + 1))
                    next += 1
                    if next == 1 << size && size < 12 { size += 1 }
                }
                previous = code
                produced += count
            }
        }
    }
}
