import CPNG
import Foundation

/// Decodes a PNG file to 8-bit non-premultiplied RGBA with libpng's simplified API (the tests'
/// independent way to read reference frames and Flipbook's own output).
enum PNGReader {
    struct Image {
        var width: Int
        var height: Int
        var pixels: [UInt8]
        /// IHDR colour type and bit depth of the file.
        var colorType: UInt8
        var bitDepth: UInt8
    }

    static func read(_ bytes: [UInt8]) throws -> Image {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        guard bytes.withUnsafeBytes({ png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }) != 0 else {
            throw ReadError.notPNG
        }
        defer { png_image_free(&image) }
        image.format = UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)
        var pixels = [UInt8](repeating: 0, count: Int(image.width) * Int(image.height) * 4)
        guard pixels.withUnsafeMutableBytes({ png_image_finish_read(&image, nil, $0.baseAddress, 0, nil) }) != 0 else {
            throw ReadError.corrupt
        }
        return Image(
            width: Int(image.width), height: Int(image.height), pixels: pixels,
            colorType: bytes[25], bitDepth: bytes[24])
    }

    static func read(contentsOf url: URL) throws -> Image {
        try read([UInt8](Data(contentsOf: url)))
    }

    enum ReadError: Error { case notPNG, corrupt }
}
