import AnimatedImage
import CAVIF
import Glibc

/// An AVIF decoded back with libavif (and dav1d): its frames as RGBA canvases and each one's
/// duration in milliseconds, for comparing with what was encoded.
struct AVIFReadBack {
    var frames: [Canvas] = []
    var durationsMs: [Double] = []
    var hasAlpha = false

    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    init(_ bytes: [UInt8]) throws {
        guard let decoder = avifDecoderCreate() else { throw Failed(description: "libavif out of memory") }
        defer { avifDecoderDestroy(decoder) }
        try bytes.withUnsafeBufferPointer { buffer in
            guard avifDecoderSetIOMemory(decoder, buffer.baseAddress, buffer.count) == AVIF_RESULT_OK,
                avifDecoderParse(decoder) == AVIF_RESULT_OK
            else { throw Failed(description: "libavif does not parse the file") }
            while avifDecoderNextImage(decoder) == AVIF_RESULT_OK {
                let image = decoder.pointee.image!
                hasAlpha = hasAlpha || image.pointee.alphaPlane != nil
                var canvas = Canvas(width: Int(image.pointee.width), height: Int(image.pointee.height))
                var rgb = avifRGBImage()
                avifRGBImageSetDefaults(&rgb, image)
                rgb.format = AVIF_RGB_FORMAT_RGBA
                rgb.depth = 8
                rgb.rowBytes = UInt32(canvas.width * 4)
                let converted = canvas.pixels.withUnsafeMutableBufferPointer { pixels in
                    rgb.pixels = pixels.baseAddress
                    return avifImageYUVToRGB(image, &rgb)
                }
                guard converted == AVIF_RESULT_OK else { throw Failed(description: "a frame does not convert to RGB") }
                frames.append(canvas)
                durationsMs.append(decoder.pointee.imageTiming.duration * 1000)
            }
        }
    }

    /// The peak signal-to-noise ratio of `a` against `b`, in dB (infinity when equal), over
    /// R, G and B premultiplied by each one's alpha: what is seen over black, so that the colour
    /// of a pixel barely visible counts as little as it shows.
    static func psnr(_ a: Canvas, _ b: Canvas) -> Double {
        var squared = 0.0
        var count = 0
        for i in stride(from: 0, to: b.pixels.count, by: 4) {
            let (alphaA, alphaB) = (Double(a.pixels[i + 3]) / 255, Double(b.pixels[i + 3]) / 255)
            for c in 0..<3 {
                let d = Double(a.pixels[i + c]) * alphaA - Double(b.pixels[i + c]) * alphaB
                squared += d * d
            }
            count += 3
        }
        guard count > 0, squared > 0 else { return .infinity }
        let mse = squared / Double(count)
        return 10 * log10(255 * 255 / mse)
    }
}
