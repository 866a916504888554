/// Turns a composited canvas into the bytes of one rendition: scaled (``Resampler``), cropped,
/// then encoded as PNG, WebP or AVIF with the source's colour information. The one place every served
/// frame is encoded — the cache's decode threads and the CLI both call it, so they make the same
/// bytes.
public struct RenditionEncoder: Sendable {
    public var png: PNGEncoder
    public var webp: WebPEncoder
    public var avif: AVIFFrameEncoder

    public init(png: PNGEncoder = PNGEncoder(), webp: WebPEncoder = WebPEncoder(), avif: AVIFFrameEncoder = AVIFFrameEncoder()) {
        self.png = png
        self.webp = webp
        self.avif = avif
    }

    /// `canvas` (a full composited frame) as `rendition`'s bytes.
    public func encode(_ canvas: Canvas, as rendition: FrameRendition, colorSpace: ColorSpaceChunks) throws -> [UInt8] {
        let frame = try Self.pixels(canvas, as: rendition)
        switch rendition.format {
        case .png: return try png.encode(frame, colorSpace: colorSpace)
        case .webp: return try webp.encode(frame, quality: rendition.quality, colorSpace: colorSpace)
        case .avif:
            return try avif.encode(frame, quality: rendition.quality ?? AVIFFrameEncoder.defaultQuality, colorSpace: colorSpace)
        }
    }

    /// `canvas` (a full composited frame) scaled and cropped as `rendition` says: the pixels
    /// ``encode(_:as:colorSpace:)`` encodes (previews and storyboard tiles are made of them).
    public static func pixels(_ canvas: Canvas, as rendition: FrameRendition) throws -> Canvas {
        cropped(try Resampler.scale(canvas, width: rendition.scaledWidth, height: rendition.scaledHeight), as: rendition)
    }

    /// A frame scaled to `rendition`'s scaled size, cropped as it says (itself when it crops nothing).
    public static func cropped(_ scaled: Canvas, as rendition: FrameRendition) -> Canvas {
        guard let crop = rendition.crop else { return scaled }
        return Canvas(width: crop.width, height: crop.height, pixels: scaled.copy(crop.intersection(scaled.rect)))
    }

    /// What making one frame of `rendition` from a `width`×`height` canvas may allocate beyond
    /// what rendering and PNG-encoding the canvas itself takes (``DecodeMemory/renderBytes``):
    /// the scaler's work and the scaled frame, and libwebp's buffers (a few times the output) or
    /// libaom's (``AVIFFrameEncoder/workingBytes(width:height:)``).
    public static func workingBytes(_ rendition: FrameRendition, width: Int, height: Int) -> Int {
        let output = rendition.scaledWidth * rendition.scaledHeight * 4
        let scaling =
            rendition.scales(width: width, height: height) ? Resampler.workingBytes(width: width, height: height) + output : 0
        switch rendition.format {
        case .png: return scaling
        case .webp: return scaling + 3 * output
        case .avif:
            return scaling + AVIFFrameEncoder.workingBytes(width: rendition.outputWidth, height: rendition.outputHeight)
        }
    }
}
