/// A full-canvas RGBA image: 4 bytes per pixel, non-premultiplied, rows top to bottom.
/// This is what every served frame is.
public struct Canvas: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public var pixels: [UInt8]

    /// A fully transparent canvas.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
        self.pixels = [UInt8](repeating: 0, count: width * height * 4)
    }

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * 4, "pixel buffer does not match \(width)×\(height)")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    public var rect: PixelRect { PixelRect(x: 0, y: 0, width: width, height: height) }

    /// Bytes held by the pixel buffer.
    public var byteCount: Int { pixels.count }

    /// Sets every pixel of `area` (clipped to the canvas) to transparent black.
    mutating func clear(_ area: PixelRect) {
        let r = area.intersection(rect)
        guard !r.isEmpty else { return }
        pixels.withUnsafeMutableBytes { raw in
            for y in r.y..<r.maxY {
                let start = (y * width + r.x) * 4
                (raw.baseAddress! + start).initializeMemory(as: UInt8.self, repeating: 0, count: r.width * 4)
            }
        }
    }

    /// A copy of the pixels inside `area` (already clipped), rows packed.
    func copy(_ area: PixelRect) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: area.area * 4)
        guard !area.isEmpty else { return out }
        pixels.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                for row in 0..<area.height {
                    let from = ((area.y + row) * width + area.x) * 4
                    (dst.baseAddress! + row * area.width * 4)
                        .copyMemory(from: src.baseAddress! + from, byteCount: area.width * 4)
                }
            }
        }
        return out
    }

    /// True when every pixel is opaque.
    public var isOpaque: Bool { isOpaque(in: rect) }

    /// True when every pixel inside `area` (already clipped) is opaque.
    func isOpaque(in area: PixelRect) -> Bool {
        pixels.withUnsafeBytes { raw in
            let words = raw.bindMemory(to: UInt32.self)
            var all: UInt32 = 0xFF00_0000
            for y in area.y..<area.maxY {
                let start = y * width + area.x
                for i in start..<(start + area.width) { all &= words[i] }
            }
            return all & 0xFF00_0000 == 0xFF00_0000
        }
    }

    /// Copies rows `rows` of `source` (a canvas of the same size) into the same rows here.
    mutating func copyRows(_ rows: Range<Int>, from source: Canvas) {
        precondition(source.width == width && source.height == height, "rows copied between canvases of other sizes")
        let rowBytes = width * 4
        pixels.withUnsafeMutableBytes { dst in
            source.pixels.withUnsafeBytes { src in
                (dst.baseAddress! + rows.lowerBound * rowBytes).copyMemory(
                    from: src.baseAddress! + rows.lowerBound * rowBytes, byteCount: rows.count * rowBytes)
            }
        }
    }

    /// Writes back pixels taken with ``copy(_:)`` of the same `area`.
    mutating func paste(_ saved: [UInt8], into area: PixelRect) {
        guard !area.isEmpty else { return }
        pixels.withUnsafeMutableBytes { dst in
            saved.withUnsafeBytes { src in
                for row in 0..<area.height {
                    let to = ((area.y + row) * width + area.x) * 4
                    (dst.baseAddress! + to).copyMemory(
                        from: src.baseAddress! + row * area.width * 4,
                        byteCount: area.width * 4)
                }
            }
        }
    }
}
