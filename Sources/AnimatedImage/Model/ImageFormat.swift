/// The container formats Flipbook reads, as told apart by their first bytes.
public enum ImageFormat: String, Sendable, Codable, CaseIterable {
    case gif
    /// A PNG with an `acTL` chunk before its first `IDAT`: an animation.
    case apng
    /// A PNG without `acTL` (or with one after the image data): a still image.
    case png
    case webp

    /// The MIME type a browser would use for the file.
    public var mimeType: String {
        switch self {
        case .gif: return "image/gif"
        case .apng: return "image/apng"
        case .png: return "image/png"
        case .webp: return "image/webp"
        }
    }

    /// Identifies the format from the magic bytes at the start of `bytes`.
    ///
    /// PNG and APNG are told apart by walking chunk headers (no decompression) until the
    /// first `IDAT`; WebP is recognised by the RIFF/WEBP header, animated or not.
    /// Returns nil for anything else.
    public static func sniff(_ bytes: ImageBytes) -> ImageFormat? {
        if bytes.count >= 6, bytes[0] == 0x47, bytes[1] == 0x49, bytes[2] == 0x46, bytes[3] == 0x38,
            bytes[4] == 0x37 || bytes[4] == 0x39, bytes[5] == 0x61
        {
            return .gif
        }
        if bytes.count >= 8, bytes[0..<8].elementsEqual(PNGSignature.bytes) {
            return PNGChunkWalker.hasAnimationControl(bytes) ? .apng : .png
        }
        if bytes.count >= 12, bytes[0] == 0x52, bytes[1] == 0x49, bytes[2] == 0x46, bytes[3] == 0x46,
            bytes[8] == 0x57, bytes[9] == 0x45, bytes[10] == 0x42, bytes[11] == 0x50
        {
            return .webp
        }
        return nil
    }

    /// The same, for bytes in an array (copies them).
    public static func sniff(_ bytes: [UInt8]) -> ImageFormat? {
        sniff(ImageBytes(bytes))
    }
}
