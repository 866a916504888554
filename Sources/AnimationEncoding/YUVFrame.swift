import CAVIF

/// The 8-bit YUV 4:2:0 image an encoder converts each RGBA frame into (by libavif, BT.601
/// matrix) before its codec takes it, reused frame after frame: the AVIF encoder hands it to
/// libavif, the H.264 encoder hands its planes to x264. Tagged sRGB (CICP 1/13/6), as frames
/// are shown unconverted. One frame is used by one thread.
final class YUVFrame {
    let image: UnsafeMutablePointer<avifImage>
    let width: Int
    let height: Int

    /// Nil when libavif cannot allocate the image.
    init?(width: Int, height: Int, range: avifRange) {
        guard let image = avifImageCreate(UInt32(width), UInt32(height), 8, AVIF_PIXEL_FORMAT_YUV420) else {
            return nil
        }
        self.image = image
        self.width = width
        self.height = height
        image.pointee.yuvRange = range
        image.pointee.colorPrimaries = UInt16(AVIF_COLOR_PRIMARIES_BT709)
        image.pointee.transferCharacteristics = UInt16(AVIF_TRANSFER_CHARACTERISTICS_SRGB)
        image.pointee.matrixCoefficients = UInt16(AVIF_MATRIX_COEFFICIENTS_BT601)
    }

    deinit { avifImageDestroy(image) }

    /// Converts `pixels` (RGBA rows of `width`) into the image, their alpha into its alpha plane
    /// with `alpha` (else ignored); libavif's result.
    func convert(_ pixels: [UInt8], alpha: Bool) -> avifResult {
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.depth = 8
        rgb.ignoreAlpha = alpha ? 0 : 1
        rgb.rowBytes = UInt32(width * 4)
        return pixels.withUnsafeBufferPointer { buffer in
            rgb.pixels = UnsafeMutablePointer(mutating: buffer.baseAddress)
            return avifImageRGBToYUV(image, &rgb)
        }
    }
}
