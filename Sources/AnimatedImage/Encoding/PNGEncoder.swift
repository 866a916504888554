/// Encodes canvases as PNG: lossless, and as small as is cheap.
///
/// - ≤ 256 distinct RGBA values (most GIF frames): a palette PNG, at the smallest bit depth
///   that holds the palette, with tRNS for the entries that are not opaque;
/// - otherwise RGB when every pixel is opaque, RGBA when not.
///
/// Defaults favour speed: compression level 1, no row filtering for palette images (filters
/// seldom help indexed data and cost time), and the "up" filter for RGB(A) rows, as cheap as
/// any and the most effective of the cheap ones on animation frames (see ``PNGScanlines``).
/// Flipbook writes the PNG chunks itself (``PNGFileWriter``) and compresses with libdeflate,
/// which at level 1 is about twice as fast as zlib's level 1 and slightly smaller.
///
/// Safe to call from several threads at once: each encode borrows its own libdeflate
/// compressor from a shared pool.
public struct PNGEncoder: Sendable {
    /// Compression level, 0 (stored, no compression) to 9 (smallest); libdeflate's levels,
    /// which follow zlib's scale.
    public var compressionLevel: Int

    public init(compressionLevel: Int = 1) {
        self.compressionLevel = min(9, max(0, compressionLevel))
    }

    /// The canvas as a PNG that carries `colorSpace` (the source image's colour-space chunks,
    /// ``AnimatedImage/colorSpace``), so a browser converts the frame as it converts the source.
    public func encode(_ canvas: Canvas, colorSpace: ColorSpaceChunks = .none) throws -> [UInt8] {
        let width = canvas.width
        let height = canvas.height
        guard width > 0, height > 0, width <= PNGFileWriter.maxChunkLength,
            height <= PNGFileWriter.maxChunkLength
        else {
            throw PNGEncodingError(message: "a PNG cannot be \(width)×\(height) pixels")
        }
        let level = min(9, max(0, compressionLevel))
        if let indexed = PaletteQuantizer.exactPalette(of: canvas) {
            return try encodeIndexed(indexed, width: width, height: height, level: level, colorSpace: colorSpace)
        }
        let opaque = canvas.isOpaque
        let header = PNGImageHeader(width: width, height: height, bitDepth: 8, colorType: opaque ? 2 : 6)
        let scanlineBytes = PNGScanlines.byteCount(width: width, height: height, bitsPerPixel: opaque ? 24 : 32)
        return try DeflateWorkspacePool.withWorkspace(level: level) { workspace in
            let scanlines = workspace.scanlines.bytes(count: scanlineBytes)
            canvas.pixels.withUnsafeBytes { pixels in
                if opaque {
                    PNGScanlines.writeRGB(pixels, width: width, height: height, into: scanlines)
                } else {
                    PNGScanlines.writeRGBA(pixels, width: width, height: height, into: scanlines)
                }
            }
            let stream = try workspace.zlibCompress(UnsafeRawBufferPointer(scanlines))
            return PNGFileWriter.file(
                header: header, colorSpace: colorSpace, palette: [], transparency: [],
                zlibStream: stream)
        }
    }

    private func encodeIndexed(
        _ image: PaletteQuantizer.IndexedImage, width: Int, height: Int,
        level: Int, colorSpace: ColorSpaceChunks
    ) throws -> [UInt8] {
        let count = image.colors.count
        let depth = count <= 2 ? 1 : count <= 4 ? 2 : count <= 16 ? 4 : 8
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
        let header = PNGImageHeader(width: width, height: height, bitDepth: UInt8(depth), colorType: 3)
        let scanlineBytes = PNGScanlines.byteCount(width: width, height: height, bitsPerPixel: depth)
        return try DeflateWorkspacePool.withWorkspace(level: level) { workspace in
            let scanlines = workspace.scanlines.bytes(count: scanlineBytes)
            image.indices.withUnsafeBufferPointer { indices in
                PNGScanlines.writeIndexed(indices, width: width, height: height, depth: depth, into: scanlines)
            }
            let stream = try workspace.zlibCompress(UnsafeRawBufferPointer(scanlines))
            return PNGFileWriter.file(
                header: header, colorSpace: colorSpace, palette: palette, transparency: alphas,
                zlibStream: stream)
        }
    }

}

/// A canvas could not be written as PNG: a size PNG cannot express, or libdeflate out of memory.
public struct PNGEncodingError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { "PNG encoding failed: \(message)" }
}
