/// Writes small GIF files for tests and benchmarks, with every field under the test's control. The LZW data
/// uses literal codes only, with a clear code before the code width would grow, which every
/// decoder reads.
public struct GIFBuilder {
    public struct Frame {
        public var rect: (x: Int, y: Int, width: Int, height: Int)
        public var indices: [UInt8]
        public var delayCentiseconds = 0
        /// The raw 3-bit disposal field (0–7).
        public var disposal = 0
        public var transparentIndex: Int? = nil
        public var localPalette: [(UInt8, UInt8, UInt8)]? = nil
        public var interlaced = false
        /// Write a graphic control extension before the image.
        public var hasControl = true

        public init(
            rect: (x: Int, y: Int, width: Int, height: Int), indices: [UInt8], delayCentiseconds: Int = 0,
            disposal: Int = 0, transparentIndex: Int? = nil, localPalette: [(UInt8, UInt8, UInt8)]? = nil,
            interlaced: Bool = false, hasControl: Bool = true
        ) {
            self.rect = rect
            self.indices = indices
            self.delayCentiseconds = delayCentiseconds
            self.disposal = disposal
            self.transparentIndex = transparentIndex
            self.localPalette = localPalette
            self.interlaced = interlaced
            self.hasControl = hasControl
        }
    }

    public var width: Int
    public var height: Int
    public var globalPalette: [(UInt8, UInt8, UInt8)]? = [(0, 0, 0), (255, 255, 255), (255, 0, 0), (0, 0, 255)]
    /// The NETSCAPE2.0 loop field; nil writes no loop extension.
    public var loopCount: Int? = 0
    public var frames: [Frame] = []
    /// Bytes appended after the last frame instead of the trailer (nil = the trailer).
    public var ending: [UInt8]? = nil

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public func build() -> [UInt8] {
        var out = Array("GIF89a".utf8)
        out += le16(width) + le16(height)
        if let palette = globalPalette {
            let bits = Self.tableBits(palette.count)
            out += [0x80 | 0x70 | UInt8(bits - 1), 0, 0]
            out += Self.table(palette, bits: bits)
        } else {
            out += [0x70, 0, 0]
        }
        if let loops = loopCount {
            out += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1] + le16(loops) + [0]
        }
        for frame in frames {
            if frame.hasControl {
                let flags = UInt8(frame.disposal & 7) << 2 | (frame.transparentIndex != nil ? 1 : 0)
                out += [0x21, 0xF9, 4, flags] + le16(frame.delayCentiseconds)
                out += [UInt8(frame.transparentIndex ?? 0), 0]
            }
            out += [0x2C] + le16(frame.rect.x) + le16(frame.rect.y) + le16(frame.rect.width) + le16(frame.rect.height)
            var flags: UInt8 = frame.interlaced ? 0x40 : 0
            var tableBytes: [UInt8] = []
            if let local = frame.localPalette {
                let bits = Self.tableBits(local.count)
                flags |= 0x80 | UInt8(bits - 1)
                tableBytes = Self.table(local, bits: bits)
            }
            out += [flags] + tableBytes
            let rows =
                frame.interlaced
                ? Self.interlace(frame.indices, width: frame.rect.width, height: frame.rect.height)
                : frame.indices
            out += Self.lzw(rows, minimumCodeSize: 8)
        }
        out += ending ?? [0x3B]
        return out
    }

    private func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }

    public static func tableBits(_ count: Int) -> Int {
        var bits = 1
        while (1 << bits) < count { bits += 1 }
        return bits
    }

    public static func table(_ colors: [(UInt8, UInt8, UInt8)], bits: Int) -> [UInt8] {
        var out: [UInt8] = []
        for i in 0..<(1 << bits) {
            let c = i < colors.count ? colors[i] : (0, 0, 0)
            out += [c.0, c.1, c.2]
        }
        return out
    }

    public static func interlace(_ indices: [UInt8], width: Int, height: Int) -> [UInt8] {
        var rows: [Int] = []
        for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
            rows += Array(stride(from: start, to: height, by: step))
        }
        return rows.flatMap { indices[$0 * width..<($0 + 1) * width] }
    }

    /// LZW with literal codes only: the code width stays minimumCodeSize + 1.
    public static func lzw(_ pixels: [UInt8], minimumCodeSize: Int) -> [UInt8] {
        let clear = 1 << minimumCodeSize
        let width = minimumCodeSize + 1
        let run = clear - 2
        var bits: UInt64 = 0
        var count = 0
        var data: [UInt8] = []
        func emit(_ code: Int) {
            bits |= UInt64(code) << UInt64(count)
            count += width
            while count >= 8 {
                data.append(UInt8(bits & 0xFF))
                bits >>= 8
                count -= 8
            }
        }
        for (i, pixel) in pixels.enumerated() {
            if i % run == 0 { emit(clear) }
            emit(Int(pixel))
        }
        emit(clear + 1)
        if count > 0 { data.append(UInt8(bits & 0xFF)) }
        var out: [UInt8] = [UInt8(minimumCodeSize)]
        var offset = 0
        while offset < data.count {
            let n = min(255, data.count - offset)
            out.append(UInt8(n))
            out += data[offset..<offset + n]
            offset += n
        }
        out.append(0)
        return out
    }
}
