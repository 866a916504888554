/// Writes a WebM (the Matroska subset of webmproject.org, on EBML: ``EBML``) of one VP9 video
/// track, as browsers play it from the first bytes: the EBML header, then one `Segment` of known
/// size holding a `SeekHead`, `Info` (1 ms timestamps, the whole duration), `Tracks`, `Cues`
/// (one per key frame: a player seeks without reading the clusters) and the `Cluster`s. Every
/// frame is a `BlockGroup` whose `Block` is at the frame's time and whose `BlockDuration` is its
/// delay, so the last frame lasts its own delay too; a frame's alpha, when the track has it,
/// is in the group's `BlockAdditions` (`BlockAddID` 1, `AlphaMode` 1 on the track). A cluster
/// starts at each key frame, and before a block would be more than 32,767 ms after its
/// cluster's start (a block's time is a 16-bit offset from it). Nothing depends on the clock:
/// the same frames always give the same bytes.
enum WebMMuxer {
    /// One coded frame: its time and duration in milliseconds, whether it is a key frame, its
    /// VP9 frame and, with alpha, its alpha stream's frame.
    struct Block {
        var timeMs: Int
        var durationMs: Int
        var isKey: Bool
        var frame: [UInt8]
        var alpha: [UInt8]?
    }

    /// A VP9 track: its frame size, whether its blocks carry alpha, and its blocks in order.
    struct Track {
        var width: Int
        var height: Int
        var alpha: Bool
        var blocks: [Block]
    }

    /// Element IDs (Matroska's numbering: RFC 9559 and the WebM container guidelines).
    enum ID {
        static let ebml: UInt32 = 0x1A45_DFA3
        static let ebmlVersion: UInt32 = 0x4286
        static let ebmlReadVersion: UInt32 = 0x42F7
        static let ebmlMaxIDLength: UInt32 = 0x42F2
        static let ebmlMaxSizeLength: UInt32 = 0x42F3
        static let docType: UInt32 = 0x4282
        static let docTypeVersion: UInt32 = 0x4287
        static let docTypeReadVersion: UInt32 = 0x4285
        static let segment: UInt32 = 0x1853_8067
        static let seekHead: UInt32 = 0x114D_9B74
        static let seek: UInt32 = 0x4DBB
        static let seekID: UInt32 = 0x53AB
        static let seekPosition: UInt32 = 0x53AC
        static let info: UInt32 = 0x1549_A966
        static let timestampScale: UInt32 = 0x2A_D7B1
        static let duration: UInt32 = 0x4489
        static let muxingApp: UInt32 = 0x4D80
        static let writingApp: UInt32 = 0x5741
        static let tracks: UInt32 = 0x1654_AE6B
        static let trackEntry: UInt32 = 0xAE
        static let trackNumber: UInt32 = 0xD7
        static let trackUID: UInt32 = 0x73C5
        static let trackType: UInt32 = 0x83
        static let flagLacing: UInt32 = 0x9C
        static let maxBlockAdditionID: UInt32 = 0x55EE
        static let codecID: UInt32 = 0x86
        static let video: UInt32 = 0xE0
        static let pixelWidth: UInt32 = 0xB0
        static let pixelHeight: UInt32 = 0xBA
        static let alphaMode: UInt32 = 0x53C0
        static let colour: UInt32 = 0x55B0
        static let matrixCoefficients: UInt32 = 0x55B1
        static let range: UInt32 = 0x55B9
        static let transferCharacteristics: UInt32 = 0x55BA
        static let primaries: UInt32 = 0x55BB
        static let cues: UInt32 = 0x1C53_BB6B
        static let cuePoint: UInt32 = 0xBB
        static let cueTime: UInt32 = 0xB3
        static let cueTrackPositions: UInt32 = 0xB7
        static let cueTrack: UInt32 = 0xF7
        static let cueClusterPosition: UInt32 = 0xF1
        static let cluster: UInt32 = 0x1F43_B675
        static let timestamp: UInt32 = 0xE7
        static let blockGroup: UInt32 = 0xA0
        static let block: UInt32 = 0xA1
        static let blockDuration: UInt32 = 0x9B
        static let referenceBlock: UInt32 = 0xFB
        static let blockAdditions: UInt32 = 0x75A1
        static let blockMore: UInt32 = 0xA6
        static let blockAddID: UInt32 = 0xEE
        static let blockAdditional: UInt32 = 0xA5
    }

    /// The largest offset of a block from its cluster's time (a signed 16-bit number).
    static let largestBlockOffset = Int(Int16.max)
    /// The width positions are written in, so that a position's size does not depend on it.
    private static let positionWidth = 8

    /// The file of `track` (at least one block).
    static func file(_ track: Track) -> [UInt8] {
        let header = EBML.master(
            ID.ebml,
            [
                EBML.uint(ID.ebmlVersion, 1), EBML.uint(ID.ebmlReadVersion, 1), EBML.uint(ID.ebmlMaxIDLength, 4),
                EBML.uint(ID.ebmlMaxSizeLength, 8), EBML.string(ID.docType, "webm"),
                // Version 4: the Colour element; a reader of version 2 plays the rest.
                EBML.uint(ID.docTypeVersion, 4), EBML.uint(ID.docTypeReadVersion, 2),
            ])
        let clusters = self.clusters(track.blocks)
        let total = track.blocks.reduce(0) { $0 + $1.durationMs }
        let info = EBML.master(
            ID.info,
            [
                EBML.uint(ID.timestampScale, 1_000_000), EBML.float(ID.duration, Double(total)),
                EBML.string(ID.muxingApp, "Flipbook"), EBML.string(ID.writingApp, "Flipbook"),
            ])
        let tracks = EBML.master(ID.tracks, [trackEntry(track)])
        // Positions are from the start of the Segment's payload; every one is written in a fixed
        // width, so the SeekHead's and Cues' sizes are known before the positions are.
        let seekHeadSize = seekHead(info: 0, tracks: 0, cues: 0).count
        let cuesSize = cues(clusters, firstCluster: 0).count
        let infoAt = seekHeadSize
        let tracksAt = infoAt + info.count
        let cuesAt = tracksAt + tracks.count
        let clustersAt = cuesAt + cuesSize
        let payload =
            seekHead(info: infoAt, tracks: tracksAt, cues: cuesAt) + info + tracks
            + cues(clusters, firstCluster: clustersAt) + clusters.flatMap(\.bytes)
        return header + EBML.idBytes(ID.segment) + EBML.vint(UInt64(payload.count), count: 8) + payload
    }

    private static func trackEntry(_ track: Track) -> [UInt8] {
        // BT.601 matrix, limited range, sRGB transfer, BT.709 primaries: as the frames are coded.
        let colour = EBML.master(
            ID.colour,
            [
                EBML.uint(ID.matrixCoefficients, 6), EBML.uint(ID.range, 1), EBML.uint(ID.transferCharacteristics, 13),
                EBML.uint(ID.primaries, 1),
            ])
        var video = [EBML.uint(ID.pixelWidth, UInt64(track.width)), EBML.uint(ID.pixelHeight, UInt64(track.height))]
        if track.alpha { video.append(EBML.uint(ID.alphaMode, 1)) }
        video.append(colour)
        var entry = [
            EBML.uint(ID.trackNumber, 1), EBML.uint(ID.trackUID, 1), EBML.uint(ID.trackType, 1),
            EBML.uint(ID.flagLacing, 0),
        ]
        if track.alpha { entry.append(EBML.uint(ID.maxBlockAdditionID, 1)) }
        entry += [EBML.string(ID.codecID, "V_VP9"), EBML.master(ID.video, video)]
        return EBML.master(ID.trackEntry, entry)
    }

    private static func seekHead(info: Int, tracks: Int, cues: Int) -> [UInt8] {
        let entries = [(ID.info, info), (ID.tracks, tracks), (ID.cues, cues)].map { id, position in
            EBML.master(
                ID.seek,
                [
                    EBML.element(ID.seekID, EBML.idBytes(id)),
                    EBML.uint(ID.seekPosition, UInt64(position), width: positionWidth),
                ])
        }
        return EBML.master(ID.seekHead, entries)
    }

    /// A cluster's bytes and the time it starts at, when it starts with a key frame.
    private struct Cluster {
        var bytes: [UInt8]
        var keyTimeMs: Int?
    }

    private static func clusters(_ blocks: [Block]) -> [Cluster] {
        var clusters: [Cluster] = []
        var index = 0
        while index < blocks.count {
            let start = blocks[index].timeMs
            var children = [EBML.uint(ID.timestamp, UInt64(start))]
            var end = index
            while end < blocks.count, end == index || !blocks[end].isKey,
                blocks[end].timeMs - start <= largestBlockOffset
            {
                let previous = end > 0 ? blocks[end - 1].timeMs : nil
                children.append(blockGroup(blocks[end], clusterTime: start, previousTime: previous))
                end += 1
            }
            clusters.append(Cluster(bytes: EBML.master(ID.cluster, children), keyTimeMs: blocks[index].isKey ? start : nil))
            index = end
        }
        return clusters
    }

    /// A block in its group: the frame at its offset from the cluster, its duration, its alpha,
    /// and — for a frame that is not a key frame — a reference to the frame before it.
    private static func blockGroup(_ block: Block, clusterTime: Int, previousTime: Int?) -> [UInt8] {
        // Track number 1 (a 1-byte variable-length integer), the 16-bit offset, no flags.
        let offset = UInt16(bitPattern: Int16(block.timeMs - clusterTime))
        var children = [EBML.element(ID.block, [0x81, UInt8(offset >> 8), UInt8(offset & 0xFF), 0x00] + block.frame)]
        if let alpha = block.alpha {
            let more = EBML.master(ID.blockMore, [EBML.uint(ID.blockAddID, 1), EBML.element(ID.blockAdditional, alpha)])
            children.append(EBML.master(ID.blockAdditions, [more]))
        }
        children.append(EBML.uint(ID.blockDuration, UInt64(block.durationMs)))
        if !block.isKey, let previousTime {
            children.append(EBML.int(ID.referenceBlock, Int64(previousTime - block.timeMs)))
        }
        return EBML.master(ID.blockGroup, children)
    }

    private static func cues(_ clusters: [Cluster], firstCluster: Int) -> [UInt8] {
        var points: [[UInt8]] = []
        var position = firstCluster
        for cluster in clusters {
            if let time = cluster.keyTimeMs {
                let positions = EBML.master(
                    ID.cueTrackPositions,
                    [EBML.uint(ID.cueTrack, 1), EBML.uint(ID.cueClusterPosition, UInt64(position), width: positionWidth)])
                points.append(EBML.master(ID.cuePoint, [EBML.uint(ID.cueTime, UInt64(time)), positions]))
            }
            position += cluster.bytes.count
        }
        return EBML.master(ID.cues, points)
    }
}
