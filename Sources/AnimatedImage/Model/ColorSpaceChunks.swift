/// An image's colour-space information, as the PNG chunks that carry it into every served
/// frame, so that a browser converts a frame as it converts the original file (frames
/// themselves are decoded without colour conversion, as the reference decodes them).
///
/// From a PNG or APNG: the first `cICP`, `iCCP`, `sRGB`, `gAMA` and `cHRM` chunk before the
/// image data, payloads unchanged (the browser picks among them by its own precedence, as it does
/// for the original). From a still WebP: the `ICCP` chunk (when VP8X flags it) as an `iCCP`
/// chunk. An animated WebP and a GIF carry none: Chromium shows their frames unconverted,
/// whatever profile they hold.
public struct ColorSpaceChunks: Sendable, Hashable {
    /// One chunk: its four-letter type and payload.
    public struct Chunk: Sendable, Hashable {
        public var type: String
        public var payload: [UInt8]
    }

    /// In the order they are written, after IHDR and before PLTE.
    public private(set) var chunks: [Chunk] = []

    /// No colour information: browsers treat the frames as sRGB.
    public static let none = ColorSpaceChunks()

    public var isEmpty: Bool { chunks.isEmpty }

    /// The chunk types kept from a PNG, in the order they are written.
    static let pngTypes = ["cICP", "iCCP", "sRGB", "gAMA", "cHRM"]

    /// Adds a chunk unless one of its type is there already (the first one counts).
    mutating func add(_ type: String, _ payload: [UInt8]) {
        guard !chunks.contains(where: { $0.type == type }) else { return }
        chunks.append(Chunk(type: type, payload: payload))
        chunks.sort { Self.pngTypes.firstIndex(of: $0.type) ?? 99 < Self.pngTypes.firstIndex(of: $1.type) ?? 99 }
    }

    /// An `iCCP` chunk for an ICC profile (a WebP's `ICCP` payload): profile name, compression
    /// method 0, the profile as a zlib stream.
    static func iccProfile(_ profile: UnsafeRawBufferPointer) throws -> ColorSpaceChunks {
        var chunks = ColorSpaceChunks()
        var payload = Array("ICC profile".utf8) + [0, 0]
        payload += try DeflateWorkspacePool.withWorkspace(level: 9) { Array(try $0.zlibCompress(profile)) }
        chunks.add("iCCP", payload)
        return chunks
    }
}
