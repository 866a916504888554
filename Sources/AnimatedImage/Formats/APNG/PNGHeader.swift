/// What the APNG frame decoder needs from a PNG's header chunks to rebuild each frame as a
/// standalone PNG: the IHDR fields and the palette and transparency chunks.
struct PNGHeader: Sendable, Hashable {
    var width: Int
    var height: Int
    var bitDepth: UInt8
    var colorType: UInt8
    var interlace: UInt8
    /// The PLTE payload, if any.
    var palette: Range<Int>?
    /// The tRNS payload, if any.
    var transparency: Range<Int>?

    /// True when the colour type carries no alpha and no tRNS chunk adds any: every pixel
    /// of every frame is opaque.
    var isOpaque: Bool {
        (colorType == 0 || colorType == 2 || colorType == 3) && transparency == nil
    }

    /// Reads and validates the IHDR payload that lies at `ihdr` in `bytes`.
    init(bytes: ImageBytes, ihdr: Range<Int>) throws {
        var reader = ByteReader(bytes, range: ihdr)
        guard let w = reader.u32be(), let h = reader.u32be(), let depth = reader.u8(),
            let color = reader.u8(), let compression = reader.u8(), let filter = reader.u8(),
            let interlace = reader.u8()
        else {
            throw AnimatedImageError.malformed(.png, "IHDR is shorter than 13 bytes")
        }
        guard w > 0, h > 0, w <= Int32.max, h <= Int32.max else {
            throw AnimatedImageError.malformed(.png, "the image is \(w)×\(h)")
        }
        let validDepths: [UInt8: [UInt8]] = [
            0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8],
            4: [8, 16], 6: [8, 16],
        ]
        guard let depths = validDepths[color], depths.contains(depth) else {
            throw AnimatedImageError.malformed(.png, "colour type \(color) with bit depth \(depth) is not valid")
        }
        guard compression == 0, filter == 0, interlace <= 1 else {
            throw AnimatedImageError.malformed(.png, "unknown compression, filter or interlace method")
        }
        width = Int(w)
        height = Int(h)
        bitDepth = depth
        colorType = color
        self.interlace = interlace
    }
}
