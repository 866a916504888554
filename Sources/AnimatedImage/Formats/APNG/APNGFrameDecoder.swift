import CPNG

/// Decodes one APNG (or still PNG) frame: the frame is rebuilt as a standalone PNG (IHDR with
/// the frame's size, the palette and transparency chunks, its data as IDAT, new CRCs) and
/// handed to libpng (``decodeRGBA(_:width:height:)``), which returns non-premultiplied RGBA. The
/// data is inflated only as far as the frame's rows need (``PNGFrameData``).
///
/// Colour-management chunks (gAMA, cHRM, sRGB, iCCP) are left out on purpose: frames are decoded
/// without colour conversion (served PNGs carry them instead, ``ColorSpaceChunks``).
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

    /// The frame as a PNG file of its own, its image data cut to what its rows need: IHDR with
    /// the frame's size, PLTE and tRNS, the data as IDAT, IEND.
    func standalonePNG(width: Int, height: Int, data: [Range<Int>]) throws -> [UInt8] {
        var payloads = [PNGChunkWriter.headerLength]
        if let palette = header.palette { payloads.append(palette.count) }
        if let transparency = header.transparency { payloads.append(transparency.count) }
        let head = PNGChunkWriter.file(byteCount: PNGChunkWriter.fileSize(payloads: payloads)) { writer in
            writer.appendHeader(width: width, height: height, bitDepth: header.bitDepth,
                                colorType: header.colorType, interlace: header.interlace)
            if let palette = header.palette {
                bytes.withUnsafeBufferPointer(of: palette) { writer.append("PLTE", UnsafeRawBufferPointer($0)) }
            }
            if let transparency = header.transparency {
                bytes.withUnsafeBufferPointer(of: transparency) { writer.append("tRNS", UnsafeRawBufferPointer($0)) }
            }
        }
        let needed = PNGFrameData.scanlineByteCount(width: width, height: height, header: header)
        return try PNGFrameData.file(head: head, inflating: data, of: bytes, needed: needed).png
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
