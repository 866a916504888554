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
        guard case .png(let dataRanges) = frame.source else {
            preconditionFailure("APNGFrameDecoder handed a non-PNG frame")
        }
        let width = frame.rect.width
        let height = frame.rect.height
        let pixels = try bytes.withUnsafeBufferPointer { input in
            try Self.decodeRGBA(
                pulling: stream(width: width, height: height, data: dataRanges, input: input),
                width: width, height: height)
        }
        return FramePatch(rect: frame.rect, pixels: .rgba(pixels))
    }

    /// The frame as a PNG file of its own, made as it is read, its image data cut to what its rows
    /// need: IHDR with the frame's size, PLTE and tRNS, the data as IDAT (``PNGFrameStream``), IEND.
    /// `input` is the file's memory, valid while the stream is read.
    func stream(width: Int, height: Int, data: [Range<Int>], input: UnsafeBufferPointer<UInt8>) throws -> PNGFrameStream {
        var payloads = [PNGChunkWriter.headerLength]
        if let palette = header.palette { payloads.append(palette.count) }
        if let transparency = header.transparency { payloads.append(transparency.count) }
        payloads.append(2)
        let head = PNGChunkWriter.file(byteCount: PNGChunkWriter.fileSize(payloads: payloads)) { writer in
            writer.appendHeader(
                width: width, height: height, bitDepth: header.bitDepth,
                colorType: header.colorType, interlace: header.interlace)
            if let palette = header.palette {
                writer.append("PLTE", UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(input)[palette]))
            }
            if let transparency = header.transparency {
                writer.append("tRNS", UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(input)[transparency]))
            }
            writer.append("IDAT", [0x78, 0x01])  // the zlib header: deflate, 32 KiB window, no dictionary
        }
        let needed = PNGFrameData.scanlineByteCount(width: width, height: height, header: header)
        return try PNGFrameStream(head: head, inflating: data, of: input, needed: needed)
    }

    /// Decodes the PNG `stream` makes, of `width`×`height` pixels, as ``decodeRGBA(_:width:height:)`` does.
    static func decodeRGBA(pulling stream: PNGFrameStream, width: Int, height: Int) throws -> [UInt8] {
        let pull: flipbook_png_pull = { context, destination, length in
            guard let context, let destination else { return 0 }
            return Unmanaged<PNGFrameStream>.fromOpaque(context).takeUnretainedValue()
                .read(into: destination, count: length) ? 1 : 0
        }
        do {
            return try withExtendedLifetime(stream) {
                try decodeRGBA(width: width, height: height) { out, text in
                    flipbook_png_read_rgba8_pulling(
                        pull, Unmanaged.passUnretained(stream).toOpaque(),
                        UInt32(width), UInt32(height), out, text.baseAddress, text.count)
                }
            }
        } catch {
            if let failure = stream.failure { throw failure }  // the data's own fault, said plainly
            throw error
        }
    }

    /// Decodes a standalone PNG of `width`×`height` pixels into non-premultiplied 8-bit RGBA
    /// as Chromium does: 16-bit samples keep their high byte, interlaced rows are put back in
    /// place, nothing is colour-converted.
    static func decodeRGBA(_ png: [UInt8], width: Int, height: Int) throws -> [UInt8] {
        try png.withUnsafeBufferPointer { input in
            try decodeRGBA(width: width, height: height) { out, text in
                flipbook_png_read_rgba8(
                    input.baseAddress, input.count, UInt32(width), UInt32(height),
                    out, text.baseAddress, text.count)
            }
        }
    }

    /// The output buffer and the error text around one call of the C reader.
    private static func decodeRGBA(
        width: Int, height: Int,
        _ read: (UnsafeMutablePointer<UInt8>, UnsafeMutableBufferPointer<CChar>) -> Int32
    ) throws -> [UInt8] {
        guard width > 0, height > 0, width <= UInt32.max, height <= UInt32.max else {
            throw FrameDataError("a \(width)×\(height) frame")
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        var message = [CChar](repeating: 0, count: 200)
        let decoded = pixels.withUnsafeMutableBufferPointer { out in
            message.withUnsafeMutableBufferPointer { text in read(out.baseAddress!, text) }
        }
        guard decoded != 0 else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw FrameDataError(reason.isEmpty ? "libpng could not decode the frame" : "libpng: \(reason)")
        }
        return pixels
    }
}
