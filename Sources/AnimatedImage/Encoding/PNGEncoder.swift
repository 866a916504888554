import CPNGEncode

/// Encodes canvases as PNG with libpng: lossless, and as small as is cheap.
///
/// - ≤ 256 distinct RGBA values (most GIF frames): a palette PNG, at the smallest bit depth
///   that holds the palette, with tRNS for the entries that are not opaque;
/// - otherwise RGB when every pixel is opaque, RGBA when not.
///
/// Defaults favour speed: zlib level 1, and no row filtering for palette images (filters seldom
/// help indexed data and cost time); RGB(A) rows use libpng's "sub" filter, cheap and effective
/// on photographic rows.
public struct PNGEncoder: Sendable {
    /// zlib compression level, 0 (store) to 9 (smallest).
    public var compressionLevel: Int

    public init(compressionLevel: Int = 1) {
        self.compressionLevel = min(9, max(0, compressionLevel))
    }

    public func encode(_ canvas: Canvas) throws -> [UInt8] {
        if let indexed = PaletteQuantizer.exactPalette(of: canvas) {
            return try encodeIndexed(indexed, width: canvas.width, height: canvas.height)
        }
        if Self.isOpaque(canvas.pixels) {
            let rgb = Self.stripAlpha(canvas.pixels)
            return try write(rows: rgb, rowBytes: canvas.width * 3, width: canvas.width, height: canvas.height,
                             colorType: 2, bitDepth: 8, palette: [], alphas: [], filters: Self.filterSub)
        }
        return try write(rows: canvas.pixels, rowBytes: canvas.width * 4, width: canvas.width, height: canvas.height,
                         colorType: 6, bitDepth: 8, palette: [], alphas: [], filters: Self.filterSub)
    }

    // libpng's PNG_FILTER_NONE and PNG_FILTER_SUB masks.
    static let filterNone: Int32 = 0x08
    static let filterSub: Int32 = 0x10

    private func encodeIndexed(_ image: PaletteQuantizer.IndexedImage, width: Int, height: Int) throws -> [UInt8] {
        let count = image.colors.count
        let depth = count <= 2 ? 1 : count <= 4 ? 2 : count <= 16 ? 4 : 8
        let rowBytes = (width * depth + 7) / 8
        let rows = depth == 8 ? image.indices : Self.pack(image.indices, width: width, height: height,
                                                          depth: depth, rowBytes: rowBytes)
        var palette: [UInt8] = []
        palette.reserveCapacity(count * 3)
        var alphas: [UInt8] = []
        for color in image.colors {
            palette.append(UInt8(truncatingIfNeeded: color))
            palette.append(UInt8(truncatingIfNeeded: color >> 8))
            palette.append(UInt8(truncatingIfNeeded: color >> 16))
        }
        // Entries with alpha < 255 come first (the quantizer orders them so), so tRNS stops at
        // the last of them.
        for color in image.colors where color >> 24 != 0xFF { alphas.append(UInt8(color >> 24)) }
        return try write(rows: rows, rowBytes: rowBytes, width: width, height: height, colorType: 3,
                         bitDepth: depth, palette: palette, alphas: alphas, filters: Self.filterNone)
    }

    private func write(rows: [UInt8], rowBytes: Int, width: Int, height: Int, colorType: Int32, bitDepth: Int,
                       palette: [UInt8], alphas: [UInt8], filters: Int32) throws -> [UInt8] {
        var output = fb_png_output()
        var message = [CChar](repeating: 0, count: 256)
        let status: Int32 = rows.withUnsafeBufferPointer { rowBuffer in
            palette.withUnsafeBufferPointer { paletteBuffer in
                alphas.withUnsafeBufferPointer { alphaBuffer in
                    var input = fb_png_input(
                        rows: rowBuffer.baseAddress, row_bytes: rowBytes,
                        width: UInt32(width), height: UInt32(height),
                        color_type: colorType, bit_depth: Int32(bitDepth),
                        palette: paletteBuffer.baseAddress, palette_count: Int32(palette.count / 3),
                        alphas: alphaBuffer.baseAddress, alpha_count: Int32(alphas.count),
                        compression_level: Int32(compressionLevel), filters: filters)
                    return fb_png_encode(&input, &output, &message, message.count)
                }
            }
        }
        defer { fb_png_free(&output) }
        guard status == 0, let data = output.data else {
            throw PNGEncodingError(message: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) },
                                                   as: UTF8.self))
        }
        return Array(UnsafeBufferPointer(start: data, count: output.size))
    }

    static func isOpaque(_ pixels: [UInt8]) -> Bool {
        pixels.withUnsafeBytes { raw in
            let words = raw.bindMemory(to: UInt32.self)
            var all: UInt32 = 0xFF00_0000
            for word in words { all &= word }
            return all & 0xFF00_0000 == 0xFF00_0000
        }
    }

    static func stripAlpha(_ pixels: [UInt8]) -> [UInt8] {
        let count = pixels.count / 4
        return [UInt8](unsafeUninitializedCapacity: count * 3) { out, initialized in
            pixels.withUnsafeBufferPointer { src in
                var s = 0, d = 0
                for _ in 0..<count {
                    out[d] = src[s]; out[d + 1] = src[s + 1]; out[d + 2] = src[s + 2]
                    s += 4
                    d += 3
                }
            }
            initialized = count * 3
        }
    }

    /// Packs 8-bit indices into 1, 2 or 4 bits per pixel, most significant bits first.
    static func pack(_ indices: [UInt8], width: Int, height: Int, depth: Int, rowBytes: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: rowBytes * height)
        let perByte = 8 / depth
        indices.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<height {
                    let row = y * width
                    let base = y * rowBytes
                    for x in 0..<width {
                        let shift = 8 - depth * (x % perByte + 1)
                        dst[base + x / perByte] |= src[row + x] << shift
                    }
                }
            }
        }
        return out
    }
}

/// libpng refused to write a PNG (out of memory, in practice).
public struct PNGEncodingError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { "PNG encoding failed: \(message)" }
}
