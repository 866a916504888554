import CPNG
import CZlib

/// Decodes one APNG (or still PNG) frame: the frame is rebuilt as a standalone PNG (IHDR with
/// the frame's size, the palette and transparency chunks, its data as IDAT, new CRCs) and
/// handed to libpng's simplified API, which returns non-premultiplied RGBA.
///
/// Colour-management chunks (gAMA, cHRM, sRGB, iCCP) are left out on purpose: Chromium shows
/// frames without colour conversion here, and libpng would otherwise convert.
struct APNGFrameDecoder: FrameDecoder {
    let bytes: ImageBytes
    let header: PNGHeader

    func decode(_ frame: FrameDescriptor) throws -> FramePatch {
        guard case let .png(dataRanges) = frame.source else {
            preconditionFailure("APNGFrameDecoder handed a non-PNG frame")
        }
        let png = standalonePNG(width: frame.rect.width, height: frame.rect.height, data: dataRanges)
        let pixels = try Self.decodeRGBA(png, width: frame.rect.width, height: frame.rect.height)
        return FramePatch(rect: frame.rect, pixels: .rgba(pixels))
    }

    /// The frame as a PNG file of its own.
    func standalonePNG(width: Int, height: Int, data: [Range<Int>]) -> [UInt8] {
        var writer = PNGChunkWriter(capacity: data.reduce(64) { $0 + $1.count + 12 })
        var ihdr = [UInt8]()
        ihdr.appendBigEndian(UInt32(width))
        ihdr.appendBigEndian(UInt32(height))
        ihdr += [header.bitDepth, header.colorType, 0, 0, header.interlace]
        ihdr.withUnsafeBufferPointer { writer.append("IHDR", $0) }
        if let palette = header.palette {
            bytes.withUnsafeBufferPointer(of: palette) { writer.append("PLTE", $0) }
        }
        if let transparency = header.transparency {
            bytes.withUnsafeBufferPointer(of: transparency) { writer.append("tRNS", $0) }
        }
        for range in data where !range.isEmpty {
            bytes.withUnsafeBufferPointer(of: range) { writer.append("IDAT", $0) }
        }
        writer.append("IEND", UnsafeBufferPointer(start: nil, count: 0))
        return writer.bytes
    }

    static func decodeRGBA(_ png: [UInt8], width: Int, height: Int) throws -> [UInt8] {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        let began = png.withUnsafeBytes { raw in
            png_image_begin_read_from_memory(&image, raw.baseAddress, raw.count)
        }
        defer { png_image_free(&image) }
        guard began != 0 else { throw FrameDataError(Self.message(image)) }
        guard Int(image.width) == width, Int(image.height) == height else {
            throw FrameDataError("libpng read a \(image.width)×\(image.height) frame, expected \(width)×\(height)")
        }
        image.format = UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)  // PNG_FORMAT_RGBA
        // 16-bit samples are sRGB-encoded like 8-bit ones: scale, do not gamma-convert.
        image.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let finished = png.withUnsafeBytes { _ in
            pixels.withUnsafeMutableBytes { out in
                png_image_finish_read(&image, nil, out.baseAddress, 0, nil)
            }
        }
        guard finished != 0 else { throw FrameDataError(Self.message(image)) }
        return pixels
    }

    private static func message(_ image: png_image) -> String {
        var text = image.message
        let message = withUnsafeBytes(of: &text) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return message.isEmpty ? "libpng could not decode the frame" : "libpng: \(message)"
    }
}

/// Writes PNG chunks (length, type, payload, CRC-32) into a byte array.
struct PNGChunkWriter {
    private(set) var bytes: [UInt8]

    init(capacity: Int) {
        bytes = PNGSignature.bytes
        bytes.reserveCapacity(capacity)
    }

    mutating func append(_ type: StaticString, _ payload: UnsafeBufferPointer<UInt8>) {
        bytes.appendBigEndian(UInt32(payload.count))
        let typeStart = bytes.count
        type.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: payload)
        let crc = bytes.withUnsafeBufferPointer { buffer in
            crc32(0, buffer.baseAddress! + typeStart, uInt(buffer.count - typeStart))
        }
        bytes.appendBigEndian(UInt32(crc))
    }
}

extension Array where Element == UInt8 {
    mutating func appendBigEndian(_ value: UInt32) {
        append(UInt8(value >> 24))
        append(UInt8(value >> 16 & 0xFF))
        append(UInt8(value >> 8 & 0xFF))
        append(UInt8(value & 0xFF))
    }
}
