/// The IHDR fields that vary between Flipbook's PNGs; compression method, filter method and
/// interlace method are always 0 (deflate, adaptive filtering, no interlacing).
struct PNGImageHeader: Equatable {
    var width: Int
    var height: Int
    var bitDepth: UInt8
    /// 2 RGB, 3 palette, 6 RGBA.
    var colorType: UInt8
}

/// Lays out a served frame's PNG: signature, IHDR, the source's colour-space chunks, PLTE and
/// tRNS when given, the zlib stream as IDAT, IEND — in one exactly-sized array
/// (``PNGChunkWriter``).
enum PNGFileWriter {
    /// The largest payload a chunk may have (2³¹ − 1). Streams beyond it, which only stored
    /// (level 0) images of over 2 GiB could make, continue in further IDAT chunks.
    static let maxChunkLength = PNGChunkWriter.maxChunkLength

    /// - Parameters:
    ///   - colorSpace: the source image's colour-space chunks (none for sRGB).
    ///   - palette: PLTE payload (RGB triples), empty for no PLTE chunk.
    ///   - transparency: tRNS payload, empty for no tRNS chunk.
    ///   - zlibStream: the compressed filtered scanlines.
    static func file(
        header: PNGImageHeader, colorSpace: ColorSpaceChunks, palette: [UInt8], transparency: [UInt8],
        zlibStream: UnsafeRawBufferPointer
    ) -> [UInt8] {
        var payloads = [PNGChunkWriter.headerLength] + PNGChunkWriter.payloadSizes(of: colorSpace)
        if !palette.isEmpty { payloads.append(palette.count) }
        if !transparency.isEmpty { payloads.append(transparency.count) }
        payloads += PNGChunkWriter.imageDataPayloadSizes(zlibStream.count) + [0]
        return PNGChunkWriter.file(byteCount: PNGChunkWriter.fileSize(payloads: payloads)) { writer in
            writer.appendHeader(
                width: header.width, height: header.height, bitDepth: header.bitDepth,
                colorType: header.colorType)
            writer.append(colorSpace)
            if !palette.isEmpty { writer.append("PLTE", palette) }
            if !transparency.isEmpty { writer.append("tRNS", transparency) }
            writer.appendImageData(zlibStream)
            writer.appendEnd()
        }
    }
}
