import CWebP

/// Decodes one WebP frame's bitstream (optional ALPH + VP8, or VP8L) with libwebp into
/// non-premultiplied RGBA.
///
/// A still lossy image without alpha uses nearest ("non-fancy") chroma upsampling, which is how
/// Chromium converts the YUV frame it gets for such images; everything else uses libwebp's
/// default, as Chromium's animated WebP decoder does.
struct WebPFrameDecoder: FrameDecoder {
    let bytes: ImageBytes
    let isAnimated: Bool

    func decode(_ frame: FrameDescriptor) throws -> FramePatch {
        guard case .webp(let range, _) = frame.source else {
            preconditionFailure("WebPFrameDecoder handed a non-WebP frame")
        }
        let width = frame.rect.width
        let height = frame.rect.height
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else { throw FrameDataError("libwebp version mismatch") }
        let status: VP8StatusCode = bytes.withUnsafeBufferPointer(of: range) { chunk in
            guard let data = chunk.baseAddress else { return VP8_STATUS_NOT_ENOUGH_DATA }
            guard WebPGetFeatures(data, range.count, &config.input) == VP8_STATUS_OK else {
                return VP8_STATUS_BITSTREAM_ERROR
            }
            guard Int(config.input.width) == width, Int(config.input.height) == height else {
                return VP8_STATUS_BITSTREAM_ERROR
            }
            let lossy = config.input.format == 1
            config.options.no_fancy_upsampling = (!isAnimated && lossy && config.input.has_alpha == 0) ? 1 : 0
            return pixels.withUnsafeMutableBufferPointer { out in
                config.output.colorspace = MODE_RGBA
                config.output.is_external_memory = 1
                config.output.u.RGBA.rgba = out.baseAddress
                config.output.u.RGBA.stride = Int32(width * 4)
                config.output.u.RGBA.size = out.count
                defer { WebPFreeDecBuffer(&config.output) }
                return WebPDecode(data, range.count, &config)
            }
        }
        guard status == VP8_STATUS_OK else {
            throw FrameDataError("libwebp could not decode the frame (status \(status.rawValue))")
        }
        return FramePatch(rect: frame.rect, pixels: .rgba(pixels), blending: .webp)
    }
}
