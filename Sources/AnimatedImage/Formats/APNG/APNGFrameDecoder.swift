import CPNG
import CZlib

/// Decodes one APNG (or still PNG) frame: the frame is rebuilt as a standalone PNG (IHDR with
/// the frame's size, the palette and transparency chunks, its data as IDAT, new CRCs) and
/// handed to libpng (``decodeRGBA(_:width:height:)``), which returns non-premultiplied RGBA. The
/// data is inflated only as far as the frame's rows need (``PNGFrameData``).
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
        let png = try standalonePNG(width: frame.rect.width, height: frame.rect.height, data: dataRanges)
        let pixels = try Self.decodeRGBA(png, width: frame.rect.width, height: frame.rect.height)
        return FramePatch(rect: frame.rect, pixels: .rgba(pixels))
    }

    /// The frame as a PNG file of its own, its image data cut to what its rows need.
    func standalonePNG(width: Int, height: Int, data: [Range<Int>]) throws -> [UInt8] {
        var writer = PNGChunkWriter(capacity: 64)
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
        let needed = PNGFrameData.scanlineByteCount(width: width, height: height, header: header)
        return try PNGFrameData.file(head: writer.bytes, inflating: data, of: bytes, needed: needed).png
    }

    /// Decodes a standalone PNG of `width`×`height` pixels into non-premultiplied 8-bit RGBA
    /// as Chromium does: 16-bit samples keep their high byte, interlaced rows are put back in
    /// place, nothing is colour-converted.
    static func decodeRGBA(_ png: [UInt8], width: Int, height: Int) throws -> [UInt8] {
        guard width > 0, height > 0, width <= UInt32.max, height <= UInt32.max else {
            throw FrameDataError("a \(width)×\(height) frame")
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        var message = [CChar](repeating: 0, count: 200)
        let decoded = png.withUnsafeBufferPointer { input in
            pixels.withUnsafeMutableBufferPointer { out in
                message.withUnsafeMutableBufferPointer { text in
                    flipbook_png_read_rgba8(input.baseAddress, input.count, UInt32(width), UInt32(height),
                                            out.baseAddress, text.baseAddress, text.count)
                }
            }
        }
        guard decoded != 0 else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw FrameDataError(reason.isEmpty ? "libpng could not decode the frame" : "libpng: \(reason)")
        }
        return pixels
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
