import CZlib

extension ColorSpaceChunks {
    /// The largest ICC profile carried into a WebP frame (profiles are kilobytes; the cap keeps a
    /// crafted `iCCP` stream from inflating without end).
    static let maxICCProfileBytes = 4 << 20

    /// The ICC profile of the `iCCP` chunk, inflated (what a WebP `ICCP` chunk holds); nil when
    /// there is none. A profile that does not inflate is an error: the frame would otherwise be
    /// shown in other colours than the PNG frame.
    func iccProfileBytes() throws -> [UInt8]? {
        guard let chunk = chunks.first(where: { $0.type == "iCCP" }),
            let nameEnd = chunk.payload.firstIndex(of: 0), nameEnd + 2 <= chunk.payload.count
        else { return nil }
        let stream = chunk.payload[(nameEnd + 2)...]
        var output = [UInt8]()
        var z = z_stream()
        guard inflateInit_(&z, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw ICCProfileError()
        }
        defer { inflateEnd(&z) }
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var status = Z_OK
        try stream.withUnsafeBufferPointer { input in
            z.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            z.avail_in = UInt32(input.count)
            repeat {
                status = buffer.withUnsafeMutableBufferPointer { out in
                    z.next_out = out.baseAddress
                    z.avail_out = UInt32(out.count)
                    return inflate(&z, Z_NO_FLUSH)
                }
                guard status == Z_OK || status == Z_STREAM_END else { throw ICCProfileError() }
                output += buffer[0..<(buffer.count - Int(z.avail_out))]
                guard output.count <= Self.maxICCProfileBytes else { throw ICCProfileError() }
            } while status != Z_STREAM_END && (z.avail_in > 0 || z.avail_out == 0)
        }
        guard status == Z_STREAM_END else { throw ICCProfileError() }
        return output
    }
}

/// The source's `iCCP` chunk does not inflate to a profile.
public struct ICCProfileError: Error, CustomStringConvertible {
    public var description: String { "the image's ICC profile does not inflate" }
}
