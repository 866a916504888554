/// Writes the filtered scanlines of a PNG image (the bytes that are deflated into IDAT): for
/// each row, one filter-type byte followed by the row's samples, in one pass from the source
/// pixels into a caller-provided buffer of exactly `height × (1 + rowBytes)` bytes.
///
/// Filters used (PNG spec, section 9), one per image kind so no time goes into choosing:
/// - palette indices: type 0 "none" (filters seldom help indexed data);
/// - RGB and RGBA: type 2 "up" (each byte minus the same byte of the row above, modulo 256),
///   and type 1 "sub" (minus the same byte of the pixel to the left) for the first row, which
///   has no row above. Over the RGB frames of the playback benchmark inputs "up" made 5% smaller
///   PNGs than "sub" at the same speed; "paeth" and per-row adaptive choice were about 1% smaller
///   still but cost more time than they save.
enum PNGScanlines {
    static let filterNone: UInt8 = 0
    static let filterSub: UInt8 = 1
    static let filterUp: UInt8 = 2

    /// Bytes of one row's samples, without its filter byte.
    static func rowBytes(width: Int, bitsPerPixel: Int) -> Int {
        (width * bitsPerPixel + 7) / 8
    }

    /// Bytes of all filtered scanlines of an image.
    static func byteCount(width: Int, height: Int, bitsPerPixel: Int) -> Int {
        height * (1 + rowBytes(width: width, bitsPerPixel: bitsPerPixel))
    }

    /// Palette indices (one byte per pixel, row-major) at `depth` bits per pixel (1, 2, 4 or 8),
    /// packed most significant bits first, unused low bits of a row's last byte zero; filter none.
    static func writeIndexed(
        _ indices: UnsafeBufferPointer<UInt8>, width: Int, height: Int, depth: Int,
        into output: UnsafeMutableRawBufferPointer
    ) {
        let rowBytes = rowBytes(width: width, bitsPerPixel: depth)
        precondition(indices.count == width * height && output.count == height * (1 + rowBytes))
        let source = indices.baseAddress!
        let destination = output.baseAddress!.bindMemory(to: UInt8.self, capacity: output.count)
        let pixelsPerByte = 8 / depth
        let wholeBytes = width / pixelsPerByte
        let leftover = width - wholeBytes * pixelsPerByte
        for y in 0..<height {
            let row = source + y * width
            let line = destination + y * (1 + rowBytes)
            line[0] = filterNone
            if depth == 8 {
                (line + 1).update(from: row, count: width)
                continue
            }
            var x = 0
            for byte in 0..<wholeBytes {
                var packed: UInt8 = 0
                for _ in 0..<pixelsPerByte {
                    packed = packed << depth | row[x]
                    x += 1
                }
                line[1 + byte] = packed
            }
            if leftover > 0 {
                var packed: UInt8 = 0
                for _ in 0..<leftover {
                    packed = packed << depth | row[x]
                    x += 1
                }
                line[1 + wholeBytes] = packed << (depth * (pixelsPerByte - leftover))
            }
        }
    }

    /// RGBA pixels (4 bytes each, row-major) as 8-bit RGB, alpha dropped. The first row uses
    /// filter sub, the others filter up.
    static func writeRGB(
        _ pixels: UnsafeRawBufferPointer, width: Int, height: Int,
        into output: UnsafeMutableRawBufferPointer
    ) {
        writeFiltered(pixels, width: width, height: height, channels: 3, into: output) { line, row, reference, count in
            var from = 0
            var to = 0
            for _ in 0..<count {
                line[to] = row[from] &- reference[from]
                line[to + 1] = row[from + 1] &- reference[from + 1]
                line[to + 2] = row[from + 2] &- reference[from + 2]
                from += 4
                to += 3
            }
        }
    }

    /// RGBA pixels (4 bytes each, row-major) as 8-bit RGBA. The first row uses filter sub, the
    /// others filter up.
    static func writeRGBA(
        _ pixels: UnsafeRawBufferPointer, width: Int, height: Int,
        into output: UnsafeMutableRawBufferPointer
    ) {
        writeFiltered(pixels, width: width, height: height, channels: 4, into: output) { line, row, reference, count in
            for i in 0..<count * 4 {
                line[i] = row[i] &- reference[i]
            }
        }
    }

    /// The scanlines of RGBA `pixels` (at least one wide) with `channels` samples a pixel: filter
    /// sub on the first row (its first pixel as it is), filter up on the others.
    /// `difference(line, row, reference, count)` writes `count` pixels of `row` minus those of
    /// `reference` (4 bytes a pixel both) into `line` (`channels` bytes a pixel).
    @inline(__always)
    private static func writeFiltered(
        _ pixels: UnsafeRawBufferPointer, width: Int, height: Int, channels: Int,
        into output: UnsafeMutableRawBufferPointer,
        difference: (UnsafeMutablePointer<UInt8>, UnsafePointer<UInt8>, UnsafePointer<UInt8>, Int) -> Void
    ) {
        let rowBytes = width * channels
        precondition(pixels.count == width * height * 4 && output.count == height * (1 + rowBytes))
        let source = pixels.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let destination = output.baseAddress!.bindMemory(to: UInt8.self, capacity: output.count)
        destination[0] = filterSub
        (destination + 1).update(from: source, count: channels)
        difference(destination + 1 + channels, source + 4, source, width - 1)
        for y in 1..<max(1, height) {
            let row = source + y * width * 4
            let line = destination + y * (1 + rowBytes)
            line[0] = filterUp
            difference(line + 1, row, row - width * 4, width)
        }
    }
}
