import CDeflate
import CZlib

/// A PNG frame's image data, inflated only as far as the frame's rows need and handed on as
/// stored (uncompressed) deflate blocks.
///
/// libpng, given a zlib stream, inflates all of it: past the last row it keeps inflating to find
/// the stream's end. A small file can carry a stream that inflates to hundreds of megabytes
/// beyond the few kilobytes its rows need (a 190 KB PNG of 64×64 pixels whose `IDAT` inflates
/// to 196 MB), and every upload verification and first frame would pay for all of it. Here the
/// stream is inflated exactly up to the frame's scanline bytes (``scanlineByteCount(width:height:header:)``)
/// and re-packed as stored blocks with their own Adler-32; libpng copies those instead of
/// inflating, so a frame costs one inflate of what it needs, wherever the file's stream ends.
/// Data that ends before the rows are complete is an error, as it was for libpng.
///
/// The standalone PNG is produced as libpng reads it (``PNGFrameStream``), one stored block at a
/// time: the scanlines are never held whole, so decoding a frame needs its RGBA output and about
/// 64 KiB more.
enum PNGFrameData {
    /// The largest payload of one stored deflate block.
    static let storedBlockLimit = 65_535

    /// What re-packing read and wrote (for tests and the fuzz targets).
    struct Counts: Equatable {
        /// Bytes of scanline data inflated: never more than the frame needs.
        var inflated: Int
        /// Bytes of the file's zlib stream consumed to get them.
        var consumed: Int
    }

    /// Bytes of filtered scanlines (one filter byte per row) in a `width`×`height` frame with
    /// `header`'s bit depth, colour type and interlace method: what its zlib stream inflates to.
    static func scanlineByteCount(width: Int, height: Int, header: PNGHeader) -> Int {
        let channels: Int
        switch header.colorType {
        case 2: channels = 3
        case 4: channels = 2
        case 6: channels = 4
        default: channels = 1  // 0 grey, 3 palette
        }
        let bitsPerPixel = channels * Int(header.bitDepth)
        func rows(_ count: Int, of width: Int) -> Int {
            width > 0 && count > 0 ? count * (1 + (width * bitsPerPixel + 7) / 8) : 0
        }
        guard header.interlace == 1 else { return rows(height, of: width) }
        // Adam7: seven passes over the frame, each a reduced image of its own.
        let passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
        return passes.reduce(0) { total, pass in
            let (x0, y0, dx, dy) = pass
            let passWidth = width > x0 ? (width - x0 + dx - 1) / dx : 0
            let passHeight = height > y0 ? (height - y0 + dy - 1) / dy : 0
            return total + rows(passHeight, of: passWidth)
        }
    }
}

/// A frame's standalone PNG, made as it is read: `head` (signature, IHDR, PLTE, tRNS, and an IDAT
/// with the zlib header), then one IDAT chunk per stored block of the first `needed` bytes that
/// the frame's zlib stream inflates to, an IDAT with their Adler-32, and IEND.
final class PNGFrameStream {
    private enum Stage { case blocks, checksum, end, done }

    private var current: [UInt8]
    private var position = 0
    private let inflater: Inflater
    private let needed: Int
    private var produced = 0
    private var adler = UInt32(1)
    private var stage = Stage.blocks
    /// Why the stream stopped early (damaged data, or data that ends before the rows).
    private(set) var failure: FrameDataError?

    /// - Parameter input: the file, which must stay valid while the stream is read.
    init(head: [UInt8], inflating ranges: [Range<Int>], of input: UnsafeBufferPointer<UInt8>, needed: Int) throws {
        precondition(needed > 0, "a frame needs at least one byte of scanlines")
        current = head
        inflater = try Inflater(ranges: ranges, of: input)
        self.needed = needed
    }

    /// What has been inflated and consumed so far.
    var counts: PNGFrameData.Counts { PNGFrameData.Counts(inflated: produced, consumed: inflater.consumed) }

    /// Copies the next `count` bytes of the PNG to `destination`; false when there are no more
    /// (see ``failure``).
    func read(into destination: UnsafeMutablePointer<UInt8>, count: Int) -> Bool {
        var copied = 0
        while copied < count {
            if position == current.count {
                guard makeNextChunk() else { return false }
            }
            let n = min(count - copied, current.count - position)
            current.withUnsafeBufferPointer { (destination + copied).update(from: $0.baseAddress! + position, count: n) }
            position += n
            copied += n
        }
        return true
    }

    /// The rest of the PNG (tests and diagnostics; a decoder reads it piece by piece).
    func readToEnd() throws -> [UInt8] {
        var bytes = Array(current[position...])
        position = current.count
        while makeNextChunk() {
            bytes += current
            position = current.count
        }
        if let failure { throw failure }
        return bytes
    }

    private func makeNextChunk() -> Bool {
        position = 0
        switch stage {
        case .blocks:
            let size = min(PNGFrameData.storedBlockLimit, needed - produced)
            do {
                current = try PNGChunkWriter.layout(byteCount: PNGChunkWriter.chunkOverhead + 5 + size) { writer in
                    try writer.appendChunk("IDAT", length: 5 + size) { body in
                        body.byte(produced + size == needed ? 1 : 0)  // BFINAL on the last block; type 0, stored
                        body.little16(UInt16(size))
                        body.little16(~UInt16(size))
                        let payload = body.reserve(size)
                        let filled = try inflater.inflate(into: payload, count: size)
                        adler = libdeflate_adler32(adler, payload, filled)
                        produced += filled
                        guard filled == size else {
                            throw FrameDataError("the image data ends after \(produced) of the \(needed) bytes the rows need")
                        }
                    }
                }
            } catch let error as FrameDataError {
                failure = error
                stage = .done
                current = []
                return false
            } catch {
                failure = FrameDataError("\(error)")
                stage = .done
                current = []
                return false
            }
            if produced == needed { stage = .checksum }
        case .checksum:
            current = PNGChunkWriter.layout(byteCount: PNGChunkWriter.chunkOverhead + 4) { writer in
                writer.appendChunk("IDAT", length: 4) { $0.big32(adler) }
            }
            stage = .end
        case .end:
            current = PNGChunkWriter.layout(byteCount: PNGChunkWriter.chunkOverhead) { $0.appendEnd() }
            stage = .done
        case .done:
            current = []
            return false
        }
        return true
    }
}

/// zlib's inflate over a stream split across several ranges of a file, one output buffer at a
/// time. The file's memory must stay valid while the inflater is used.
final class Inflater {
    private var stream = z_stream()
    private let input: UnsafeBufferPointer<UInt8>
    private var pending: ArraySlice<Range<Int>>
    private var ended = false

    init(ranges: [Range<Int>], of input: UnsafeBufferPointer<UInt8>) throws {
        self.input = input
        pending = ranges.filter { !$0.isEmpty }[...]
        // Window size from the stream's own header, as libpng reads it.
        guard inflateInit2_(&stream, 0, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw FrameDataError("zlib could not start")
        }
        // Chromium does not check the stream's Adler-32 (measured in Chromium 156: a frame whose
        // checksum is damaged shows), so neither does this.
        inflateValidate(&stream, 0)
    }

    deinit { inflateEnd(&stream) }

    var consumed: Int { Int(stream.total_in) }

    /// Inflates up to `count` bytes into `output`; returns how many came (fewer when the stream
    /// ends or the data runs out). Throws on a damaged stream.
    func inflate(into output: UnsafeMutablePointer<UInt8>, count: Int) throws -> Int {
        stream.next_out = output
        stream.avail_out = uInt(count)
        while stream.avail_out > 0, !ended {
            if stream.avail_in == 0 {
                guard let range = pending.popFirst() else { break }
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress! + range.lowerBound)
                stream.avail_in = uInt(range.count)
            }
            let status = CZlib.inflate(&stream, Z_NO_FLUSH)
            switch status {
            case Z_OK: continue
            case Z_STREAM_END: ended = true
            case Z_BUF_ERROR where stream.avail_in == 0: continue  // wants the next range
            default:
                let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
                throw FrameDataError("zlib: \(message)")
            }
        }
        return count - Int(stream.avail_out)
    }
}
