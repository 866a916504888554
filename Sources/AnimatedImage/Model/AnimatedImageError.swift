/// Why an input cannot be served. Every case carries enough to tell the user what is wrong in
/// one line (``description``).
public enum AnimatedImageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a GIF, PNG or WebP file.
    case unsupportedFormat
    /// The container is broken before the first complete frame (bad header, no image data...).
    case malformed(ImageFormat, String)
    /// The file has no frame that decodes completely.
    case noCompleteFrame(ImageFormat, String)
    /// A frame index outside `0..<frameCount`.
    case frameOutOfRange(index: Int, frameCount: Int)
    /// The input exceeds a configured limit: which one, what the input asks for, and the limit.
    case limitExceeded(DecodeLimit, value: Int, limit: Int)
    /// A frame's data failed to decode after the index accepted it.
    case frameDecodeFailed(index: Int, String)

    public var description: String {
        switch self {
        case .unsupportedFormat:
            return "unsupported format: not a GIF, PNG/APNG or WebP file"
        case .malformed(let format, let why):
            return "malformed \(format.rawValue.uppercased()): \(why)"
        case .noCompleteFrame(let format, let why):
            return "no complete frame in this \(format.rawValue.uppercased()) file: \(why)"
        case .frameOutOfRange(let index, let count):
            return "frame index \(index) is out of range (the image has \(count) frame\(count == 1 ? "" : "s"))"
        case .limitExceeded(let limit, let value, let max):
            // Frames (and so total pixels) are counted while indexing and counting stops at the
            // first frame past the limit: the value is a lower bound there.
            let bound = (limit == .maxFrames || limit == .maxTotalPixels) ? "at least " : ""
            return "limit exceeded: \(limit.rawValue) is \(max), the image needs \(bound)\(value)"
        case .frameDecodeFailed(let index, let why):
            return "frame \(index) could not be decoded: \(why)"
        }
    }
}
