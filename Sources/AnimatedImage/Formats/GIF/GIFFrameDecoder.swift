import CGIF

/// Decodes one GIF frame with giflib, starting at the frame's own image descriptor: giflib is
/// handed a 13-byte header of our making followed by the frame's bytes, so no other frame is
/// read and nothing is slurped.
///
/// The palette is built here: the local colour table, else the global one; entries the tables
/// do not define are opaque black (as in Chromium). A frame whose LZW data uses a code before
/// it is defined is not decoded at all (``GIFCodeCheck``), as in Chromium.
struct GIFFrameDecoder: FrameDecoder {
    let bytes: ImageBytes
    let header: GIFHeader
    /// Runs ``GIFCodeCheck`` before decoding; off for the frames of a verified image, whose
    /// verification ran it on every frame already (the bytes are the same).
    var checksCodes = true

    func decode(_ frame: FrameDescriptor) throws -> FramePatch {
        guard case .gif(let descriptorOffset, let end, let transparentIndex) = frame.source else {
            preconditionFailure("GIFFrameDecoder handed a non-GIF frame")
        }
        let flags = bytes[descriptorOffset + 9]
        var localPalette: Range<Int>? = nil
        var dataStart = descriptorOffset + 10
        if flags & 0x80 != 0 {
            let size = 3 << (Int(flags & 7) + 1)
            localPalette = dataStart..<dataStart + size
            dataStart += size
        }
        let palette = Self.palette(bytes, local: localPalette, global: header.globalPalette)
        let minimumCodeSize = bytes[dataStart]
        guard (1...8).contains(minimumCodeSize) else {
            throw FrameDataError("LZW minimum code size \(minimumCodeSize) is not 1–8")
        }
        let rect = frame.rect
        guard !rect.isEmpty else {
            return FramePatch(
                rect: rect,
                pixels: .indexed(
                    indices: [], palette: palette,
                    transparentIndex: transparentIndex))
        }
        if checksCodes {
            try bytes.withUnsafeBufferPointer { file in
                try GIFCodeCheck.check(
                    file, minimumCodeSize: Int(minimumCodeSize), start: dataStart + 1, end: end,
                    pixels: rect.width * rect.height)
            }
        }
        let indices = try Self.decodeIndices(
            bytes, descriptorOffset: descriptorOffset, end: end,
            width: rect.width, height: rect.height,
            interlaced: flags & 0x40 != 0)
        return FramePatch(
            rect: rect,
            pixels: .indexed(
                indices: indices, palette: palette,
                transparentIndex: transparentIndex))
    }

    static func palette(_ bytes: ImageBytes, local: Range<Int>?, global: Range<Int>?) -> [UInt32] {
        var palette = [UInt32](repeating: 0xFF00_0000, count: 256)
        if let table = local ?? global {
            var i = 0
            var p = table.lowerBound
            while p + 2 < table.upperBound, i < 256 {
                palette[i] = UInt32(bytes[p]) | UInt32(bytes[p + 1]) << 8 | UInt32(bytes[p + 2]) << 16 | 0xFF00_0000
                i += 1
                p += 3
            }
        }
        return palette
    }

    /// Runs giflib's LZW decoder over the frame's data and returns one index per pixel, rows in
    /// display order (interlaced rows put in place).
    private static func decodeIndices(
        _ bytes: ImageBytes, descriptorOffset: Int, end: Int,
        width: Int, height: Int, interlaced: Bool
    ) throws -> [UInt8] {
        var indices = [UInt8](repeating: 0, count: width * height)
        try bytes.withUnsafeBufferPointer { file in
            let stream = GIFByteStream(file: file, frameStart: descriptorOffset + 1, frameEnd: end)
            try withExtendedLifetime(stream) {
                var error: Int32 = 0
                guard let gif = DGifOpen(Unmanaged.passUnretained(stream).toOpaque(), gifRead, &error) else {
                    throw FrameDataError("giflib could not start (error \(error))")
                }
                defer { DGifCloseFile(gif, &error) }
                guard DGifGetImageDesc(gif) == GIF_OK else {
                    throw FrameDataError(Self.message(gif))
                }
                try indices.withUnsafeMutableBufferPointer { out in
                    if !interlaced, width * height <= Int(Int32.max) {
                        // One call for the whole frame: giflib decodes any number of pixels per
                        // call, so rows need not be asked for one by one.
                        guard DGifGetLine(gif, out.baseAddress!, Int32(width * height)) == GIF_OK else {
                            throw FrameDataError(Self.message(gif))
                        }
                        return
                    }
                    for row in 0..<height {
                        let target = interlaced ? Self.interlacedRow(row, height: height) : row
                        guard DGifGetLine(gif, out.baseAddress! + target * width, Int32(width)) == GIF_OK else {
                            throw FrameDataError(Self.message(gif))
                        }
                    }
                }
            }
        }
        return indices
    }

    /// The display row of the `n`th row stored in an interlaced image (passes of every 8th row
    /// from 0, every 8th from 4, every 4th from 2, every 2nd from 1).
    static func interlacedRow(_ n: Int, height: Int) -> Int {
        let pass1 = (height + 7) / 8
        if n < pass1 { return n * 8 }
        let pass2 = (height + 3) / 8
        if n < pass1 + pass2 { return (n - pass1) * 8 + 4 }
        let pass3 = (height + 1) / 4
        if n < pass1 + pass2 + pass3 { return (n - pass1 - pass2) * 4 + 2 }
        return (n - pass1 - pass2 - pass3) * 2 + 1
    }

    private static func message(_ gif: UnsafeMutablePointer<GifFileType>) -> String {
        if let text = GifErrorString(gif.pointee.Error) { return String(cString: text) }
        return "giflib error \(gif.pointee.Error)"
    }
}

/// The bytes giflib reads for one frame: a synthetic GIF header (a 1×1 screen, no global colour
/// table) followed by the frame's record from just after its 0x2C introducer.
private final class GIFByteStream {
    private static let header: [UInt8] = [0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0, 0, 0, 0]
    let file: UnsafeBufferPointer<UInt8>
    let frameStart: Int
    let frameEnd: Int
    var position = 0

    init(file: UnsafeBufferPointer<UInt8>, frameStart: Int, frameEnd: Int) {
        self.file = file
        self.frameStart = frameStart
        self.frameEnd = min(frameEnd, file.count)
    }

    func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int {
        var written = 0
        while written < count {
            if position < Self.header.count {
                buffer[written] = Self.header[position]
                position += 1
                written += 1
                continue
            }
            let source = frameStart + position - Self.header.count
            let available = frameEnd - source
            guard available > 0 else { break }
            let n = min(available, count - written)
            (buffer + written).update(from: file.baseAddress! + source, count: n)
            written += n
            position += n
        }
        return written
    }
}

private let gifRead: InputFunc = { gif, buffer, count in
    guard let gif, let buffer, count > 0, let user = gif.pointee.UserData else { return 0 }
    let stream = Unmanaged<GIFByteStream>.fromOpaque(user).takeUnretainedValue()
    return Int32(stream.read(into: buffer, count: Int(count)))
}
