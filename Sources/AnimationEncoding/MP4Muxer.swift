/// One H.264 video track's coded samples, in decode order (which is presentation order: the
/// encoder makes no B-frames), with what an MP4 needs to describe them.
struct H264Track {
    var width: Int
    var height: Int
    /// The sequence and picture parameter sets (NAL units without length prefix or start code).
    var sps: [UInt8]
    var pps: [UInt8]
    /// Each sample's NAL units, each behind a 4-byte big-endian length, concatenated.
    var samples: [UInt8] = []
    var sampleSizes: [Int] = []
    /// Each sample's duration in ``timescale`` units.
    var durations: [Int] = []
    /// The 1-based numbers of the samples that are IDR pictures (random-access points).
    var syncSamples: [Int] = []
    /// Ticks per second of the durations.
    var timescale: Int
}

/// Writes an MP4 (ISO/IEC 14496-12 and -15) of one H.264 track, as browsers play it from the
/// first bytes: `ftyp`, then `moov` (every sample's size, duration and place), then `mdat` —
/// the movie header first, so a player starts before the whole file is in ("fast start"). No
/// audio track, no edit list (the first sample is presented at 0), times cleared to 0 so the
/// same samples always give the same bytes.
enum MP4Muxer {
    /// The file of `track`.
    static func file(_ track: H264Track) -> [UInt8] {
        var out = BoxWriter()
        out.box("ftyp") { box in
            box.fourCC("isom")
            box.u32(0x200)
            for brand in ["isom", "iso2", "avc1", "mp41"] { box.fourCC(brand) }
        }
        let ftypSize = out.bytes.count
        // The chunk offset depends on the moov's size, which does not depend on the offset's
        // value: write it once with 0 to learn the size, then with the offset.
        let large = ftypSize + track.samples.count + 8 + 64 * track.sampleSizes.count + 4096 > Int(UInt32.max)
        var probe = BoxWriter()
        movie(track, dataOffset: 0, largeOffsets: large, into: &probe)
        let mdatHeader = track.samples.count + 8 > Int(UInt32.max) ? 16 : 8
        let dataOffset = ftypSize + probe.bytes.count + mdatHeader
        movie(track, dataOffset: dataOffset, largeOffsets: large, into: &out)
        if mdatHeader == 16 {
            out.u32(1)
            out.fourCC("mdat")
            out.u64(UInt64(track.samples.count + 16))
        } else {
            out.u32(UInt32(track.samples.count + 8))
            out.fourCC("mdat")
        }
        out.bytes += track.samples
        return out.bytes
    }

    private static func movie(_ track: H264Track, dataOffset: Int, largeOffsets: Bool, into out: inout BoxWriter) {
        let duration = track.durations.reduce(0, +)
        let wide = duration > Int(UInt32.max)
        out.box("moov") { moov in
            moov.fullBox("mvhd", version: wide ? 1 : 0) { box in
                box.times(wide, timescale: track.timescale, duration: duration)
                box.u32(0x0001_0000)  // rate 1.0
                box.u16(0x0100)  // volume 1.0
                box.zeros(10)
                box.matrix()
                box.zeros(24)
                box.u32(2)  // next track ID
            }
            moov.box("trak") { trak in
                trak.fullBox("tkhd", version: wide ? 1 : 0, flags: 3) { box in  // enabled, in movie
                    box.u32(0)  // creation
                    box.u32(0)  // modification
                    if wide { box.u32(0); box.u32(0) }
                    box.u32(1)  // track ID
                    box.u32(0)
                    if wide { box.u64(UInt64(duration)) } else { box.u32(UInt32(duration)) }
                    box.zeros(8)
                    box.u16(0)  // layer
                    box.u16(0)  // alternate group
                    box.u16(0)  // volume: video
                    box.u16(0)
                    box.matrix()
                    box.u32(UInt32(track.width) << 16)
                    box.u32(UInt32(track.height) << 16)
                }
                trak.box("mdia") { mdia in
                    mdia.fullBox("mdhd", version: wide ? 1 : 0) { box in
                        box.times(wide, timescale: track.timescale, duration: duration)
                        box.u16(0x55C4)  // language "und"
                        box.u16(0)
                    }
                    mdia.fullBox("hdlr") { box in
                        box.u32(0)
                        box.fourCC("vide")
                        box.zeros(12)
                        box.bytes += Array("VideoHandler".utf8) + [0]
                    }
                    mdia.box("minf") { minf in
                        minf.fullBox("vmhd", flags: 1) { box in box.zeros(8) }
                        minf.box("dinf") { dinf in
                            dinf.fullBox("dref") { box in
                                box.u32(1)
                                box.fullBox("url ", flags: 1) { _ in }  // the data is in this file
                            }
                        }
                        minf.box("stbl") { stbl in
                            sampleTable(track, dataOffset: dataOffset, largeOffsets: largeOffsets, into: &stbl)
                        }
                    }
                }
            }
        }
    }

    private static func sampleTable(_ track: H264Track, dataOffset: Int, largeOffsets: Bool, into stbl: inout BoxWriter) {
        stbl.fullBox("stsd") { box in
            box.u32(1)
            box.box("avc1") { entry in
                entry.zeros(6)
                entry.u16(1)  // data reference index
                entry.zeros(16)
                entry.u16(UInt16(track.width))
                entry.u16(UInt16(track.height))
                entry.u32(0x0048_0000)  // 72 dpi
                entry.u32(0x0048_0000)
                entry.u32(0)
                entry.u16(1)  // frames per sample
                entry.zeros(32)  // compressor name
                entry.u16(0x0018)  // depth
                entry.u16(0xFFFF)
                entry.box("avcC") { avcC in decoderConfiguration(track, into: &avcC) }
            }
        }
        // Durations, run-length coded: the delay table, sample by sample.
        var runs: [(count: Int, duration: Int)] = []
        for duration in track.durations {
            if let last = runs.last, last.duration == duration {
                runs[runs.count - 1].count += 1
            } else {
                runs.append((1, duration))
            }
        }
        stbl.fullBox("stts") { box in
            box.u32(UInt32(runs.count))
            for run in runs {
                box.u32(UInt32(run.count))
                box.u32(UInt32(run.duration))
            }
        }
        if track.syncSamples.count < track.sampleSizes.count {
            stbl.fullBox("stss") { box in
                box.u32(UInt32(track.syncSamples.count))
                for sample in track.syncSamples { box.u32(UInt32(sample)) }
            }
        }
        stbl.fullBox("stsc") { box in  // one chunk holds every sample
            box.u32(1)
            box.u32(1)
            box.u32(UInt32(track.sampleSizes.count))
            box.u32(1)
        }
        stbl.fullBox("stsz") { box in
            box.u32(0)
            box.u32(UInt32(track.sampleSizes.count))
            for size in track.sampleSizes { box.u32(UInt32(size)) }
        }
        if largeOffsets {
            stbl.fullBox("co64") { box in
                box.u32(1)
                box.u64(UInt64(dataOffset))
            }
        } else {
            stbl.fullBox("stco") { box in
                box.u32(1)
                box.u32(UInt32(dataOffset))
            }
        }
    }

    /// The `AVCDecoderConfigurationRecord` (ISO/IEC 14496-15 §5.3.3.1): profile and level from
    /// the SPS, 4-byte NAL lengths, the SPS and PPS; for the High profiles also the chroma
    /// format (4:2:0) and bit depths (8).
    private static func decoderConfiguration(_ track: H264Track, into box: inout BoxWriter) {
        let sps = track.sps
        box.u8(1)
        box.u8(sps.count > 1 ? sps[1] : 0)  // profile
        box.u8(sps.count > 2 ? sps[2] : 0)  // constraint flags
        box.u8(sps.count > 3 ? sps[3] : 0)  // level
        box.u8(0xFF)  // 4-byte lengths
        box.u8(0xE1)  // one SPS
        box.u16(UInt16(sps.count))
        box.bytes += sps
        box.u8(1)
        box.u16(UInt16(track.pps.count))
        box.bytes += track.pps
        if let profile = sps.dropFirst().first, [100, 110, 122, 144].contains(profile) {
            box.u8(0xFC | 1)  // 4:2:0
            box.u8(0xF8)  // luma 8 bits
            box.u8(0xF8)  // chroma 8 bits
            box.u8(0)  // no SPS extensions
        }
    }
}

/// Big-endian fields and nested ISO-BMFF boxes, each box's size written when it closes.
struct BoxWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { bytes += [UInt8(value >> 8), UInt8(value & 0xFF)] }
    mutating func u32(_ value: UInt32) {
        bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
    mutating func u64(_ value: UInt64) {
        u32(UInt32(value >> 32))
        u32(UInt32(value & 0xFFFF_FFFF))
    }
    mutating func zeros(_ count: Int) { bytes += repeatElement(0, count: count) }
    mutating func fourCC(_ code: String) { bytes += Array(code.utf8.prefix(4)) }

    /// A box of `type` whose contents `body` writes.
    mutating func box(_ type: String, _ body: (inout BoxWriter) -> Void) {
        let start = bytes.count
        u32(0)
        fourCC(type)
        body(&self)
        let size = UInt32(bytes.count - start)
        bytes.replaceSubrange(
            start..<start + 4, with: [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)])
    }

    /// A full box: `version` and 24 bits of `flags` before the contents.
    mutating func fullBox(_ type: String, version: UInt8 = 0, flags: UInt32 = 0, _ body: (inout BoxWriter) -> Void) {
        box(type) { box in
            box.u32(UInt32(version) << 24 | flags & 0xFF_FFFF)
            body(&box)
        }
    }

    /// Creation and modification time (0), timescale and duration, 32 or 64 bits wide.
    mutating func times(_ wide: Bool, timescale: Int, duration: Int) {
        if wide {
            u64(0)
            u64(0)
            u32(UInt32(timescale))
            u64(UInt64(duration))
        } else {
            u32(0)
            u32(0)
            u32(UInt32(timescale))
            u32(UInt32(duration))
        }
    }

    /// The identity transformation matrix.
    mutating func matrix() {
        for value: UInt32 in [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000] { u32(value) }
    }
}
