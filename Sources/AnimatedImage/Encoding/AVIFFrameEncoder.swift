import CAVIF

/// Encodes one frame as a still AVIF with libavif and libaom: always lossy, 8-bit YUV 4:2:0,
/// full range, BT.601 matrix, tagged sRGB (CICP 1/13/6) as the frames are shown unconverted, and
/// a lossless alpha plane when the frame has transparency. Quality maps to libaom's quantizer
/// level as the AVIF previews' does (`(100 − quality) × 63 / 100`), at libaom's `cpu-used` 6
/// (the previews' speed) on one thread. An ICC profile the source carries goes into the `colr`
/// box, as the WebP frames carry it. Safe to call from several threads at once.
///
/// About 40 ms of CPU for a 320×180 frame, 17× a lossy WebP's: `format=auto` never chooses it
/// (BENCHMARKS.md, "AVIF single frames").
public struct AVIFFrameEncoder: Sendable {
    /// The frames' default quality when `format=avif` gives none: 44 (quantizer level 35), the
    /// previews' default.
    public static let defaultQuality = 44
    /// libaom's `cpu-used`.
    public var speed: Int

    public init(speed: Int = 6) { self.speed = min(9, max(0, speed)) }

    /// libaom's quantizer level for `quality` (1–100).
    public static func quantizerLevel(_ quality: Int) -> Int { EncoderQuality.level(quality, worst: 63) }

    /// `canvas` as a still AVIF at `quality` (1–100).
    public func encode(_ canvas: Canvas, quality: Int, colorSpace: ColorSpaceChunks = .none) throws -> [UInt8] {
        guard canvas.width > 0, canvas.height > 0, canvas.width <= 1 << 16, canvas.height <= 1 << 16 else {
            throw AVIFFrameEncodingError(message: "an AVIF cannot be \(canvas.width)×\(canvas.height) pixels")
        }
        guard let image = avifImageCreate(UInt32(canvas.width), UInt32(canvas.height), 8, AVIF_PIXEL_FORMAT_YUV420) else {
            throw AVIFFrameEncodingError(message: "libavif out of memory")
        }
        defer { avifImageDestroy(image) }
        image.pointee.yuvRange = AVIF_RANGE_FULL
        image.pointee.colorPrimaries = UInt16(AVIF_COLOR_PRIMARIES_BT709)
        image.pointee.transferCharacteristics = UInt16(AVIF_TRANSFER_CHARACTERISTICS_SRGB)
        image.pointee.matrixCoefficients = UInt16(AVIF_MATRIX_COEFFICIENTS_BT601)
        if let profile = try colorSpace.iccProfileBytes() {
            profile.withUnsafeBufferPointer { avifImageSetProfileICC(image, $0.baseAddress, $0.count) }
        }
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.depth = 8
        rgb.ignoreAlpha = canvas.isOpaque ? 1 : 0
        rgb.rowBytes = UInt32(canvas.width * 4)
        try canvas.pixels.withUnsafeBufferPointer { pixels in
            rgb.pixels = UnsafeMutablePointer(mutating: pixels.baseAddress)
            try Self.check(avifImageRGBToYUV(image, &rgb), "converting the frame to YUV")
        }
        guard let encoder = avifEncoderCreate() else { throw AVIFFrameEncodingError(message: "libavif out of memory") }
        defer { avifEncoderDestroy(encoder) }
        encoder.pointee.codecChoice = AVIF_CODEC_CHOICE_AOM
        encoder.pointee.maxThreads = 1
        encoder.pointee.speed = Int32(speed)
        encoder.pointee.minQuantizer = 0
        encoder.pointee.maxQuantizer = 63
        encoder.pointee.minQuantizerAlpha = AVIF_QUANTIZER_LOSSLESS
        encoder.pointee.maxQuantizerAlpha = AVIF_QUANTIZER_LOSSLESS
        avifEncoderSetCodecSpecificOption(encoder, "end-usage", "q")
        avifEncoderSetCodecSpecificOption(encoder, "cq-level", String(Self.quantizerLevel(quality)))
        var output = avifRWData(data: nil, size: 0)
        defer { avifRWDataFree(&output) }
        try Self.check(avifEncoderWrite(encoder, image, &output), "encoding the frame")
        guard let data = output.data else { throw AVIFFrameEncodingError(message: "libavif wrote nothing") }
        return Array(UnsafeBufferPointer(start: data, count: output.size))
    }

    /// What encoding a `width`×`height` frame may hold besides the output: libaom's frame buffers
    /// in its all-intra mode (no look-ahead, no references kept), counted as 8 frames of 4:2:0
    /// with libaom's 288-pixel borders, for colour and alpha, and the image libavif converts into.
    public static func workingBytes(width: Int, height: Int) -> Int {
        8 * 2 * (width + 288) * (height + 288) * 3 / 2 + width * height * 4
    }

    private static func check(_ result: avifResult, _ what: String) throws {
        guard result == AVIF_RESULT_OK else {
            throw AVIFFrameEncodingError(message: "libavif failed \(what): \(String(cString: avifResultToString(result)))")
        }
    }
}

/// libavif failed to encode a frame.
public struct AVIFFrameEncodingError: Error, CustomStringConvertible, Equatable {
    public let message: String

    public init(message: String) { self.message = message }

    public var description: String { message }
}
