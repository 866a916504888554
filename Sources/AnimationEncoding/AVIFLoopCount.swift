/// Writes an animation's loop count into an AVIF sequence made by libavif 0.11, which writes
/// none: an edit list (`edts`/`elst`) in each track, as ISO/IEC 23008-12 §9.6.1 reads it and
/// libavif ≥ 1.0 writes it. The edit list's one entry is one play (the track's media, from time
/// 0); its flag 1 repeats it until the track's duration (`tkhd`, and `mvhd`) is filled:
/// `playCount` plays, or forever when that duration is all ones (`playCount` 0). A decoder then
/// reports `playCount − 1` repetitions (Chromium's `ImageDecoder.repetitionCount`), or infinity;
/// without an edit list it reports an unknown count, which players loop forever.
///
/// The edit lists go into `moov`, so every offset into the file behind it moves by their size:
/// the chunk offsets (`stco`, `co64`) and the primary item's extents (`iloc`) into `mdat`. A
/// still AVIF (no `moov`) is returned as it is.
enum AVIFLoopCount {
    /// `file` (an AVIF sequence from libavif) playing `playCount` times, 0 for forever.
    static func written(_ file: [UInt8], playCount: Int) throws -> [UInt8] {
        guard let top = ISOBoxes.children(file, 0..<file.count) else { throw malformed("the file's boxes") }
        guard let moov = top.first(where: { $0.type == "moov" }) else { return file }
        guard let movie = ISOBoxes.children(file, moov.payload),
            let mvhd = movie.first(where: { $0.type == "mvhd" }),
            let firstTrack = movie.first(where: { $0.type == "trak" })
        else { throw malformed("moov") }
        let shift = movie.filter { $0.type == "trak" }.count * editListSize
        let moved = moov.range.upperBound  // offsets at or past here move by `shift`
        let timescale = try Self.timescale(file, mvhd)
        let total = totalDuration(try onePlay(file, firstTrack, movieTimescale: timescale), playCount)
        var parts: [[UInt8]] = []
        for child in movie {
            switch child.type {
            case "trak":
                parts.append(try track(file, child, timescale: timescale, playCount: playCount, from: moved, by: shift))
            case "mvhd":
                var header = Array(file[child.range])
                setDuration(&header, of: child, to: total)
                parts.append(header)
            default:
                parts.append(Array(file[child.range]))
            }
        }
        var out = Array(file[0..<moov.range.lowerBound])
        for box in top where box.range.upperBound <= moov.range.lowerBound && box.type == "meta" {
            try shiftItemLocations(&out, meta: box, from: moved, by: shift)
        }
        var writer = BoxWriter()
        writer.box("moov") { body in for part in parts { body.bytes += part } }
        out += writer.bytes
        for box in top where box.range.lowerBound >= moov.range.upperBound {
            guard box.type != "meta" else { throw malformed("meta after moov") }
            out += file[box.range]
        }
        return out
    }

    /// An `edts` box holding an `elst` of version 1 with one entry: 8 + (12 + 4 + 20).
    static let editListSize = 44

    /// The duration of `playCount` plays of `onePlay`: all ones (indefinite) for forever.
    static func totalDuration(_ onePlay: UInt64, _ playCount: Int) -> UInt64 {
        playCount <= 0 ? UInt64.max : onePlay * UInt64(playCount)
    }

    /// `trak` with its `tkhd` duration set, an edit list after the `tkhd`, and its chunk offsets
    /// moved.
    private static func track(
        _ file: [UInt8], _ trak: ISOBoxes.Box, timescale: UInt32, playCount: Int, from moved: Int, by shift: Int
    ) throws -> [UInt8] {
        let play = try onePlay(file, trak, movieTimescale: timescale)
        guard let children = ISOBoxes.children(file, trak.payload) else { throw malformed("trak") }
        var parts: [[UInt8]] = []
        for child in children {
            var bytes = Array(file[child.range])
            switch child.type {
            case "tkhd":
                setDuration(&bytes, of: child, to: totalDuration(play, playCount))
                parts.append(bytes)
                parts.append(editList(onePlay: play, repeats: playCount != 1))
            case "mdia":
                try shiftChunkOffsets(&bytes, file: file, mdia: child, from: moved, by: shift)
                parts.append(bytes)
            default:
                parts.append(bytes)
            }
        }
        var writer = BoxWriter()
        writer.box("trak") { body in for part in parts { body.bytes += part } }
        return writer.bytes
    }

    /// `edts` with one edit: `onePlay` of the media from time 0 at rate 1, repeated or not.
    static func editList(onePlay: UInt64, repeats: Bool) -> [UInt8] {
        var writer = BoxWriter()
        writer.box("edts") { edts in
            edts.fullBox("elst", version: 1, flags: repeats ? 1 : 0) { elst in
                elst.u32(1)
                elst.u64(onePlay)  // segment_duration, in the movie's timescale
                elst.u64(0)  // media_time
                elst.u16(1)  // media_rate_integer
                elst.u16(0)  // media_rate_fraction
            }
        }
        return writer.bytes
    }

    /// The timescale of `mvhd` or `mdhd`: after the version, flags and two times (32 or 64 bits).
    private static func timescale(_ file: [UInt8], _ header: ISOBoxes.Box) throws -> UInt32 {
        guard !header.payload.isEmpty else { throw malformed(header.type) }
        let at = header.payload.lowerBound + 4 + (file[header.payload.lowerBound] == 1 ? 16 : 8)
        guard at + 4 <= header.payload.upperBound else { throw malformed(header.type) }
        return UInt32(ISOBoxes.read(file, at, 4))
    }

    /// One play of `trak` in the movie's timescale: its `mdhd` duration, converted exactly.
    private static func onePlay(_ file: [UInt8], _ trak: ISOBoxes.Box, movieTimescale: UInt32) throws -> UInt64 {
        guard let mdia = ISOBoxes.child("mdia", file, trak.payload), let mdhd = ISOBoxes.child("mdhd", file, mdia.payload)
        else { throw malformed("a track without mdhd") }
        let mediaTimescale = UInt64(try timescale(file, mdhd))
        let wide = file[mdhd.payload.lowerBound] == 1
        let at = mdhd.payload.lowerBound + 4 + (wide ? 16 : 8) + 4
        guard at + (wide ? 8 : 4) <= mdhd.payload.upperBound else { throw malformed("mdhd") }
        let scaled = ISOBoxes.read(file, at, wide ? 8 : 4).multipliedReportingOverflow(by: UInt64(movieTimescale))
        guard mediaTimescale > 0, !scaled.overflow, scaled.partialValue % mediaTimescale == 0 else {
            throw malformed("a track duration outside the movie's timescale")
        }
        return scaled.partialValue / mediaTimescale
    }

    /// Sets the duration of the `mvhd` or `tkhd` `box`, whose bytes are `header` (version 0 or
    /// 1; version 0 holds at most 32 bits, all ones for indefinite).
    private static func setDuration(_ header: inout [UInt8], of box: ISOBoxes.Box, to duration: UInt64) {
        let payload = box.payload.lowerBound - box.range.lowerBound
        let wide = header[payload] == 1
        // mvhd: times, then timescale; tkhd: times, then track_ID and a reserved word.
        let at = payload + 4 + (wide ? 16 : 8) + (box.type == "tkhd" ? 8 : 4)
        ISOBoxes.write(&header, at, wide ? 8 : 4, wide ? duration : min(duration, UInt64(UInt32.max)))
    }

    /// Moves the `stco`/`co64` offsets inside `mdia` (whose bytes are `bytes`) that point at or
    /// past `moved`.
    private static func shiftChunkOffsets(
        _ bytes: inout [UInt8], file: [UInt8], mdia: ISOBoxes.Box, from moved: Int, by shift: Int
    ) throws {
        let base = mdia.range.lowerBound
        for minf in ISOBoxes.children(file, mdia.payload) ?? [] where minf.type == "minf" {
            for stbl in ISOBoxes.children(file, minf.payload) ?? [] where stbl.type == "stbl" {
                for table in ISOBoxes.children(file, stbl.payload) ?? [] where table.type == "stco" || table.type == "co64" {
                    let width = table.type == "co64" ? 8 : 4
                    guard table.payload.count >= 8 else { throw malformed(table.type) }
                    let count = Int(ISOBoxes.read(file, table.payload.lowerBound + 4, 4))
                    let first = table.payload.lowerBound + 8
                    guard count <= (table.payload.upperBound - first) / width else { throw malformed(table.type) }
                    for entry in 0..<count {
                        try moveOffset(&bytes, first + entry * width - base, width: width, from: moved, by: shift)
                    }
                }
            }
        }
    }

    /// Moves the item extents of `meta`'s `iloc` (in `out` at the file's own offsets) that lie
    /// at or past `moved` (construction method 0: offsets into this file).
    private static func shiftItemLocations(_ out: inout [UInt8], meta: ISOBoxes.Box, from moved: Int, by shift: Int) throws {
        guard meta.payload.count >= 4,
            let iloc = ISOBoxes.child("iloc", out, meta.payload.lowerBound + 4..<meta.payload.upperBound)
        else { return }
        var reader = FieldReader(end: iloc.payload.upperBound, at: iloc.payload.lowerBound)
        let version = try reader.field(out, 1)
        _ = try reader.field(out, 3)
        let sizes = try reader.field(out, 1)
        let (offsetSize, lengthSize) = (Int(sizes >> 4), Int(sizes & 15))
        let more = try reader.field(out, 1)
        let (baseSize, indexSize) = (Int(more >> 4), version >= 1 ? Int(more & 15) : 0)
        for _ in 0..<(try reader.field(out, version < 2 ? 2 : 4)) {
            _ = try reader.field(out, version < 2 ? 2 : 4)  // item_ID
            var method: UInt64 = 0
            if version >= 1 { method = try reader.field(out, 2) & 15 }
            let reference = try reader.field(out, 2)
            let fileOffsets = method == 0 && reference == 0  // data_reference_index 0: this file
            let baseAt = reader.at
            let base = try reader.field(out, baseSize)
            if fileOffsets && base > 0 { try moveOffset(&out, baseAt, width: baseSize, from: moved, by: shift) }
            for _ in 0..<(try reader.field(out, 2)) {
                _ = try reader.field(out, indexSize)
                let offsetAt = reader.at
                _ = try reader.field(out, offsetSize)
                _ = try reader.field(out, lengthSize)
                if fileOffsets && base == 0 && offsetSize > 0 {
                    try moveOffset(&out, offsetAt, width: offsetSize, from: moved, by: shift)
                }
            }
        }
    }

    /// Reads big-endian fields one after another, up to `end`.
    private struct FieldReader {
        let end: Int
        var at: Int

        mutating func field(_ bytes: [UInt8], _ width: Int) throws -> UInt64 {
            guard at + width <= end else { throw malformed("iloc") }
            defer { at += width }
            return ISOBoxes.read(bytes, at, width)
        }
    }

    /// Adds `shift` to the big-endian offset of `width` bytes at `at` when it is at least `moved`.
    private static func moveOffset(_ bytes: inout [UInt8], _ at: Int, width: Int, from moved: Int, by shift: Int) throws {
        let value = ISOBoxes.read(bytes, at, width)
        guard value >= UInt64(moved) else { return }
        let shifted = value + UInt64(shift)
        guard width == 8 || shifted <= UInt64(UInt32.max) else { throw malformed("an offset beyond 32 bits") }
        ISOBoxes.write(&bytes, at, width, shifted)
    }

    private static func malformed(_ what: String) -> AVIFEncodingError {
        AVIFEncodingError(message: "writing the loop count: libavif's file has \(what) out of shape")
    }
}
