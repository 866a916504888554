/// Finds whether a canvas has at most 256 distinct RGBA values and, if so, maps it to a palette
/// and one index per pixel. Nothing is approximated: either the palette is exact or there is
/// none.
enum PaletteQuantizer {
    struct IndexedImage {
        /// Packed RGBA (`r | g << 8 | b << 16 | a << 24`); entries that are not opaque first.
        var colors: [UInt32]
        var indices: [UInt8]
    }

    /// Open addressing over 4096 slots (16 KiB of keys, 4 KiB of values: L1-resident). At most
    /// 256 keys, so nearly every colour sits in its home slot and a lookup is one compare.
    private static let slotBits = 12
    private static let slotCount = 1 << slotBits

    static func exactPalette(of canvas: Canvas) -> IndexedImage? {
        let count = canvas.width * canvas.height
        guard count > 0 else { return nil }
        // Key 0 marks an empty slot; the colour 0 (transparent black) is counted on the side.
        let keys = UnsafeMutablePointer<UInt32>.allocate(capacity: slotCount)
        keys.initialize(repeating: 0, count: slotCount)
        let values = UnsafeMutablePointer<UInt8>.allocate(capacity: slotCount)
        values.initialize(repeating: 0, count: slotCount)
        let found = UnsafeMutablePointer<UInt32>.allocate(capacity: 256)
        defer { keys.deallocate(); values.deallocate(); found.deallocate() }

        var used = 0
        var indices = [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
        let ok: Bool = canvas.pixels.withUnsafeBytes { raw in
            let pixels = raw.bindMemory(to: UInt32.self).baseAddress!
            return indices.withUnsafeMutableBufferPointer { outBuffer in
                let out = outBuffer.baseAddress!
                var zeroIndex = -1
                var i = 0
                while i < count {
                    let color = pixels[i]
                    let home = Int(truncatingIfNeeded: (color &* 0x9E37_79B1) >> UInt32(32 - slotBits))
                    if keys[home] == color, color != 0 {
                        out[i] = values[home]
                    } else if color == 0 {
                        if zeroIndex < 0 {
                            guard used < 256 else { return false }
                            zeroIndex = used
                            found[used] = 0
                            used += 1
                        }
                        out[i] = UInt8(truncatingIfNeeded: zeroIndex)
                    } else {
                        var slot = home
                        while true {
                            let key = keys[slot]
                            if key == 0 {
                                guard used < 256 else { return false }
                                keys[slot] = color
                                values[slot] = UInt8(truncatingIfNeeded: used)
                                found[used] = color
                                out[i] = UInt8(truncatingIfNeeded: used)
                                used += 1
                                break
                            }
                            if key == color {
                                out[i] = values[slot]
                                break
                            }
                            slot = (slot &+ 1) & (slotCount - 1)
                        }
                    }
                    i &+= 1
                }
                return true
            }
        }
        guard ok else { return nil }
        let colors = Array(UnsafeBufferPointer(start: found, count: used))
        // Put the entries that are not opaque first so tRNS can stop early.
        let translucent = colors.indices.filter { colors[$0] >> 24 != 0xFF }
        guard !translucent.isEmpty, translucent.last! >= translucent.count else {
            return IndexedImage(colors: colors, indices: indices)
        }
        let opaque = colors.indices.filter { colors[$0] >> 24 == 0xFF }
        let order = translucent + opaque
        var remap = [UInt8](repeating: 0, count: 256)
        for (newIndex, oldIndex) in order.enumerated() { remap[oldIndex] = UInt8(newIndex) }
        remap.withUnsafeBufferPointer { map in
            indices.withUnsafeMutableBufferPointer { out in
                for i in 0..<out.count { out[i] = map[Int(out[i])] }
            }
        }
        return IndexedImage(colors: order.map { colors[$0] }, indices: indices)
    }
}
