import Testing

@testable import AnimatedImage

/// LZW data that uses a code before it is defined ends the frame in Chromium (measured with
/// browser-frames on hand-made GIFs: a bad code mid-frame loses the frame; one after the frame's
/// pixels are complete, a missing end code, extra pixels, all show it).
@Suite("GIF LZW codes")
struct GIFCodeCheckTests {
    /// Packs LZW codes as an encoder does (minimum code size 2: clear 4, end 5, first free 6),
    /// growing the code size as the table grows; returns the data as one sub-block run.
    static func data(_ codes: [Int]) -> [UInt8] {
        var packed: [UInt8] = []
        var accumulator = 0
        var bits = 0
        var size = 3
        var next = 6
        var first = true
        for code in [4] + codes {
            accumulator |= code << bits
            bits += size
            while bits >= 8 { packed.append(UInt8(accumulator & 0xFF)); accumulator >>= 8; bits -= 8 }
            if code == 4 { size = 3; next = 6; first = true; continue }
            if code == 5 { continue }
            if !first { next += 1; if next == 1 << size && size < 12 { size += 1 } }
            first = false
        }
        if bits > 0 { packed.append(UInt8(accumulator & 0xFF)) }
        var blocks: [UInt8] = []
        for start in stride(from: 0, to: packed.count, by: 255) {
            let chunk = packed[start..<min(packed.count, start + 255)]
            blocks += [UInt8(chunk.count)] + chunk
        }
        return blocks + [0]
    }

    static func check(_ codes: [Int], pixels: Int = 8) throws {
        let bytes = data(codes)
        try bytes.withUnsafeBufferPointer {
            try GIFCodeCheck.check($0, minimumCodeSize: 2, start: 0, end: bytes.count, pixels: pixels)
        }
    }

    @Test func definedCodesPass() throws {
        try Self.check([1, 2, 3, 1, 2, 3, 1, 2, 5])
        try Self.check([1, 6, 7, 2, 5])  // 6 = [1,1] (code = next: "KwKwK"), 7 = [1,1,1]
        try Self.check([1, 2, 6, 7, 8, 5])  // back references to entries just made
        try Self.check([1, 2, 3, 1, 2, 3, 1, 2, 15, 5])  // after the frame is full: ignored
        try Self.check([1, 2, 3, 1, 2, 3, 1, 2])  // no end code
        try Self.check([1, 2, 3, 1, 4, 2, 3, 1, 2, 5])  // a clear code mid-frame
    }

    @Test func anUndefinedCodeBeforeTheFrameIsFullFails() {
        #expect(throws: FrameDataError.self) { try Self.check([1, 2, 3, 15, 1, 2, 3, 1, 5]) }
        #expect(throws: FrameDataError.self) { try Self.check([6, 1, 2, 3, 1, 2, 3, 1, 5]) }  // 6 first: nothing to repeat
        #expect(throws: FrameDataError.self) { try Self.check([1, 2, 3, 1, 4, 7, 2, 3, 5]) }  // 7 forgotten by the clear
    }

    /// Through the whole decoder: the frame with the bad code and every later one are not shown.
    @Test func aGIFFrameWithAnUndefinedCodeIsNotShown() throws {
        func gif(_ frames: [[UInt8]]) -> [UInt8] {
            var out = Array("GIF89a".utf8) + [4, 0, 2, 0, 0xF1, 0, 0] + [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255]
            for data in frames {
                out += [0x21, 0xF9, 4, 0, 10, 0, 0, 0, 0x2C, 0, 0, 0, 0, 4, 0, 2, 0, 0, 2] + data
            }
            return out + [0x3B]
        }
        let good = Self.data([1, 2, 3, 1, 2, 3, 1, 2, 5])
        #expect(try AnimatedImage(bytes: gif([good, good, good])).frameCount == 3)
        let image = try AnimatedImage(bytes: gif([good, Self.data([1, 2, 3, 15, 1, 2, 3, 1, 5]), good]))
        #expect(image.frameCount == 1)
        #expect(image.index.truncated)
    }
}
