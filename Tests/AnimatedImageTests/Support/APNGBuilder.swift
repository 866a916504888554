import CZlib

/// Writes small RGBA APNG files for tests, chunk by chunk, with correct CRCs and sequence
/// numbers unless a test asks otherwise.
struct APNGBuilder {
    struct Frame {
        var rect: (x: Int, y: Int, width: Int, height: Int)
        /// RGBA, rect.width × rect.height.
        var pixels: [UInt8]
        var delayNumerator = 1
        var delayDenominator = 10
        /// 0 none, 1 background, 2 previous.
        var dispose: UInt8 = 0
        /// 0 source, 1 over.
        var blend: UInt8 = 0
    }

    var width: Int
    var height: Int
    var plays = 0
    var frames: [Frame] = []
    /// An IDAT image that is not part of the animation (written before the first fcTL).
    var defaultImage: [UInt8]? = nil
    /// Overrides acTL's frame count (nil = frames.count); nil `writeAnimationControl` = still PNG.
    var declaredFrames: Int? = nil
    var writeAnimationControl = true

    func build() -> [UInt8] {
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += chunk("IHDR", be32(width) + be32(height) + [8, 6, 0, 0, 0])
        if writeAnimationControl {
            out += chunk("acTL", be32(declaredFrames ?? frames.count) + be32(plays))
        }
        var sequence = 0
        if let defaultImage {
            out += chunk("IDAT", Self.compress(defaultImage, width: width, height: height))
        }
        for (i, frame) in frames.enumerated() {
            var fctl = be32(sequence) + be32(frame.rect.width) + be32(frame.rect.height)
            fctl += be32(frame.rect.x) + be32(frame.rect.y)
            fctl += be16(frame.delayNumerator) + be16(frame.delayDenominator) + [frame.dispose, frame.blend]
            sequence += 1
            let data = Self.compress(frame.pixels, width: frame.rect.width, height: frame.rect.height)
            if writeAnimationControl { out += chunk("fcTL", fctl) }
            if i == 0 && defaultImage == nil {
                out += chunk("IDAT", data)
            } else {
                out += chunk("fdAT", be32(sequence) + data)
                sequence += 1
            }
        }
        out += chunk("IEND", [])
        return out
    }

    static func compress(_ rgba: [UInt8], width: Int, height: Int) -> [UInt8] {
        var raw: [UInt8] = []
        for y in 0..<height {
            raw.append(0)
            raw += rgba[y * width * 4..<(y + 1) * width * 4]
        }
        var size = compressBound(uLong(raw.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        _ = compress2(&out, &size, raw, uLong(raw.count), 6)
        return Array(out[0..<Int(size)])
    }

    func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + payload
        let crc = body.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        return be32(payload.count) + body + be32(Int(crc))
    }

    func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
}

/// A solid RGBA block of `count` pixels.
func solid(_ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8, count: Int) -> [UInt8] {
    Array([[r, g, b, a]].repeated(count).joined())
}

extension Array {
    func repeated(_ n: Int) -> [Element] { Array(Swift.repeatElement(self, count: n).joined()) }
}
