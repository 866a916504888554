/// The tests' own reader of an AVIF file's ISO-BMFF boxes (ISO/IEC 14496-12), independent of
/// libavif: the brands, each track's handler, timescale and sample durations (`stts`), so a
/// test reads back what a player is told.
struct ISOBMFFReader {
    /// One track of a `moov` box.
    struct Track: Equatable {
        var handler: String
        var timescale: UInt32
        /// Every sample's duration, in the timescale, `stts` expanded.
        var sampleDurations: [UInt64]
    }

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    let bytes: [UInt8]

    /// The boxes directly inside `range`: (type, payload range).
    func boxes(in range: Range<Int>) throws -> [(type: String, payload: Range<Int>)] {
        var found: [(String, Range<Int>)] = []
        var at = range.lowerBound
        while at < range.upperBound {
            guard at + 8 <= range.upperBound else { throw Malformed(description: "a box header past its parent at \(at)") }
            var size = Int(u32(at))
            var header = 8
            if size == 1 {
                size = Int(u64(at + 8))
                header = 16
            } else if size == 0 {
                size = range.upperBound - at
            }
            guard size >= header, at + size <= range.upperBound else { throw Malformed(description: "box size \(size) at \(at)") }
            found.append((String(decoding: bytes[at + 4..<at + 8], as: UTF8.self), at + header..<at + size))
            at += size
        }
        return found
    }

    /// The payload of the first box of `type` inside `range`.
    func box(_ type: String, in range: Range<Int>) throws -> Range<Int> {
        guard let found = try boxes(in: range).first(where: { $0.type == type }) else {
            throw Malformed(description: "no \(type) box")
        }
        return found.payload
    }

    /// The major brand and compatible brands of `ftyp`.
    func brands() throws -> [String] {
        let ftyp = try box("ftyp", in: 0..<bytes.count)
        return stride(from: ftyp.lowerBound, to: ftyp.upperBound, by: 4).filter { $0 != ftyp.lowerBound + 4 }.map {
            String(decoding: bytes[$0..<$0 + 4], as: UTF8.self)
        }
    }

    /// The tracks of `moov` (none for a still AVIF, which has no `moov`).
    func tracks() throws -> [Track] {
        guard let moov = try boxes(in: 0..<bytes.count).first(where: { $0.type == "moov" }) else { return [] }
        return try boxes(in: moov.payload).filter { $0.type == "trak" }.map { trak in
            let mdia = try box("mdia", in: trak.payload)
            let mdhd = try box("mdhd", in: mdia)
            // FullBox: version (1 byte), flags (3); version 1 has 64-bit times.
            let timescale = bytes[mdhd.lowerBound] == 1 ? u32(mdhd.lowerBound + 20) : u32(mdhd.lowerBound + 12)
            let hdlr = try box("hdlr", in: mdia)
            let handler = String(decoding: bytes[hdlr.lowerBound + 8..<hdlr.lowerBound + 12], as: UTF8.self)
            let stts = try box("stts", in: box("stbl", in: box("minf", in: mdia)))
            var durations: [UInt64] = []
            let entries = Int(u32(stts.lowerBound + 4))
            for entry in 0..<entries {
                let at = stts.lowerBound + 8 + entry * 8
                durations += Array(repeating: UInt64(u32(at + 4)), count: Int(u32(at)))
            }
            return Track(handler: handler, timescale: timescale, sampleDurations: durations)
        }
    }

    /// How many times each track of `moov` repeats, read as ISO/IEC 23008-12 §9.6.1 says (and
    /// libavif ≥ 1.0 and Chromium's decoder read it): no edit list → nil (unknown: players loop
    /// forever); an edit list without flag 1 → 0; with it, the track's duration (`tkhd`) filled
    /// by its one segment, minus the first play — `Int.max` for an all-ones duration (forever).
    func repetitions() throws -> [Int?] {
        guard let moov = try boxes(in: 0..<bytes.count).first(where: { $0.type == "moov" }) else { return [] }
        return try boxes(in: moov.payload).filter { $0.type == "trak" }.map { trak -> Int? in
            guard let edts = try boxes(in: trak.payload).first(where: { $0.type == "edts" }) else { return nil }
            let elst = try box("elst", in: edts.payload)
            let wide = bytes[elst.lowerBound] == 1
            guard u32(elst.lowerBound + 4) == 1 else { throw Malformed(description: "an edit list of other than one entry") }
            let segment = wide ? u64(elst.lowerBound + 8) : UInt64(u32(elst.lowerBound + 8))
            guard bytes[elst.lowerBound + 3] & 1 == 1 else { return 0 }
            let tkhd = try box("tkhd", in: trak.payload)
            let tkhdWide = bytes[tkhd.lowerBound] == 1
            let duration = tkhdWide ? u64(tkhd.lowerBound + 28) : UInt64(u32(tkhd.lowerBound + 20))
            if duration == (tkhdWide ? UInt64.max : UInt64(UInt32.max)) { return Int.max }
            guard segment > 0 else { throw Malformed(description: "an edit of duration 0") }
            return Int((duration + segment - 1) / segment) - 1
        }
    }

    private func u32(_ at: Int) -> UInt32 {
        bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private func u64(_ at: Int) -> UInt64 {
        bytes[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
