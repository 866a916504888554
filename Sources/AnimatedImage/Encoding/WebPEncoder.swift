import CWebP

/// Encodes canvases as still WebP with libwebp: lossless (the decoded pixels equal the canvas's,
/// except the colour of fully transparent pixels, which the encoder may change), or lossy at a
/// quality. An ICC profile travels as the `ICCP` chunk (through libwebpmux), as the PNG frames
/// carry it as `iCCP`; WebP has no place for PNG's `sRGB`, `gAMA` and `cHRM`, which are dropped.
///
/// Effort favours speed, as the PNG encoder's does: frames are encoded once and served many
/// times, but a miss waits for the encode. Safe to call from several threads at once.
public struct WebPEncoder: Sendable {
    /// libwebp's `method` for lossy frames (0 fastest … 6 smallest). 2: on 320×180 frames of
    /// the decode-bench animations at quality 80, 3% larger than libwebp's default 4 and about
    /// 2.5 ms a frame faster (cwebp -m 0…6 over 50 frames).
    public var lossyMethod: Int32
    /// libwebp's lossless preset level (0 fastest … 9 smallest).
    public var losslessLevel: Int32

    public init(lossyMethod: Int32 = 2, losslessLevel: Int32 = 1) {
        self.lossyMethod = lossyMethod
        self.losslessLevel = losslessLevel
    }

    /// The canvas as WebP: lossy at `quality` (1–100), lossless when nil.
    public func encode(_ canvas: Canvas, quality: Int?, colorSpace: ColorSpaceChunks = .none) throws -> [UInt8] {
        guard canvas.width > 0, canvas.height > 0, canvas.width <= Int(WEBP_MAX_DIMENSION),
            canvas.height <= Int(WEBP_MAX_DIMENSION)
        else { throw WebPEncodingError(message: "a WebP cannot be \(canvas.width)×\(canvas.height) pixels") }
        var config = try configuration(quality: quality)
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw WebPEncodingError(message: "libwebp's picture did not initialise") }
        defer { WebPPictureFree(&picture) }
        picture.use_argb = config.lossless
        picture.width = Int32(canvas.width)
        picture.height = Int32(canvas.height)
        let imported = canvas.pixels.withUnsafeBufferPointer {
            WebPPictureImportRGBA(&picture, $0.baseAddress, Int32(canvas.width * 4))
        }
        guard imported != 0 else { throw WebPEncodingError(message: "out of memory importing the frame") }
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        let encoded = withUnsafeMutablePointer(to: &writer) { writerPointer in
            picture.writer = WebPMemoryWrite
            picture.custom_ptr = UnsafeMutableRawPointer(writerPointer)
            return WebPEncode(&config, &picture)
        }
        guard encoded != 0, let data = writer.mem else {
            throw WebPEncodingError(message: "libwebp error \(picture.error_code.rawValue)")
        }
        let bitstream = Array(UnsafeBufferPointer(start: data, count: writer.size))
        guard let profile = try colorSpace.iccProfileBytes() else { return bitstream }
        return try Self.withICCProfile(bitstream, profile)
    }

    /// libwebp's settings for frames at `quality` (nil: lossless) with this encoder's effort; the
    /// animated encoder (``AnimatedWebPEncoder``) uses the same.
    func configuration(quality: Int?) throws -> WebPConfig {
        var config = WebPConfig()
        if let quality {
            guard WebPConfigPreset(&config, WEBP_PRESET_DEFAULT, Float(EncoderQuality.clamped(quality))) != 0 else {
                throw WebPEncodingError(message: "libwebp's configuration does not match its headers")
            }
            config.method = lossyMethod
        } else {
            guard WebPConfigInit(&config) != 0, WebPConfigLosslessPreset(&config, losslessLevel) != 0 else {
                throw WebPEncodingError(message: "libwebp's configuration does not match its headers")
            }
        }
        return config
    }

    /// The still image `bitstream` with an `ICCP` chunk (a VP8X container), by libwebpmux.
    static func withICCProfile(_ bitstream: [UInt8], _ profile: [UInt8]) throws -> [UInt8] {
        guard let mux = WebPMuxNew() else { throw WebPEncodingError(message: "libwebpmux out of memory") }
        defer { WebPMuxDelete(mux) }
        var assembled = WebPData()
        defer { WebPDataClear(&assembled) }
        let status = bitstream.withUnsafeBufferPointer { image in
            profile.withUnsafeBufferPointer { icc in
                var imageData = WebPData(bytes: image.baseAddress, size: image.count)
                var iccData = WebPData(bytes: icc.baseAddress, size: icc.count)
                guard WebPMuxSetImage(mux, &imageData, 1) == WEBP_MUX_OK,
                    WebPMuxSetChunk(mux, "ICCP", &iccData, 1) == WEBP_MUX_OK
                else { return WEBP_MUX_BAD_DATA }
                return WebPMuxAssemble(mux, &assembled)
            }
        }
        guard status == WEBP_MUX_OK, let bytes = assembled.bytes else {
            throw WebPEncodingError(message: "libwebpmux could not add the ICC profile (\(status.rawValue))")
        }
        return Array(UnsafeBufferPointer(start: bytes, count: assembled.size))
    }
}

/// A canvas could not be written as WebP.
public struct WebPEncodingError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { "WebP encoding failed: \(message)" }
}
