/// Finds whether a canvas has at most 256 distinct RGBA values and, if so, maps it to a palette
/// and one index per pixel. Nothing is approximated: either the palette is exact or there is
/// none.
enum PaletteQuantizer {
    struct IndexedImage {
        /// Packed RGBA (`r | g << 8 | b << 16 | a << 24`); entries that are not opaque first.
        var colors: [UInt32]
        var indices: [UInt8]
    }

    static func exactPalette(of canvas: Canvas) -> IndexedImage? {
        let count = canvas.width * canvas.height
        guard count > 0 else { return nil }
        // Open addressing over 1024 slots: at most 256 keys, so probes stay short.
        let slots = 1024
        var keys = [UInt32](repeating: 0, count: slots)
        var values = [Int16](repeating: -1, count: slots)
        var colors: [UInt32] = []
        colors.reserveCapacity(256)
        var indices = [UInt8](repeating: 0, count: count)
        let ok: Bool = canvas.pixels.withUnsafeBytes { raw in
            let pixels = raw.bindMemory(to: UInt32.self)
            return indices.withUnsafeMutableBufferPointer { out in
                var lastColor = pixels[0] &+ 1
                var lastIndex: UInt8 = 0
                for i in 0..<count {
                    let color = pixels[i]
                    if color == lastColor {
                        out[i] = lastIndex
                        continue
                    }
                    var slot = Int((color &* 0x9E37_79B1) >> 22)
                    while true {
                        let value = values[slot]
                        if value < 0 {
                            guard colors.count < 256 else { return false }
                            values[slot] = Int16(colors.count)
                            keys[slot] = color
                            lastIndex = UInt8(colors.count)
                            colors.append(color)
                            break
                        }
                        if keys[slot] == color {
                            lastIndex = UInt8(value)
                            break
                        }
                        slot = (slot + 1) & (slots - 1)
                    }
                    lastColor = color
                    out[i] = lastIndex
                }
                return true
            }
        }
        guard ok else { return nil }
        // Put the entries that are not opaque first so tRNS can stop early.
        let translucent = colors.indices.filter { colors[$0] >> 24 != 0xFF }
        guard !translucent.isEmpty, translucent.last! >= translucent.count else {
            return IndexedImage(colors: colors, indices: indices)
        }
        let opaque = colors.indices.filter { colors[$0] >> 24 == 0xFF }
        let order = translucent + opaque
        var remap = [UInt8](repeating: 0, count: 256)
        for (newIndex, oldIndex) in order.enumerated() { remap[oldIndex] = UInt8(newIndex) }
        for i in 0..<indices.count { indices[i] = remap[Int(indices[i])] }
        return IndexedImage(colors: order.map { colors[$0] }, indices: indices)
    }
}
