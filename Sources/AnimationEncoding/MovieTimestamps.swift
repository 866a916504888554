/// Clears the creation and modification times libavif writes into an AVIF sequence's `mvhd`,
/// `tkhd` and `mdhd` boxes (the clock at encoding), so that the same frames always give the
/// same bytes: the command line's file equals the service's, and replicas agree. ISO/IEC
/// 14496-12 allows 0 there. The boxes are patched in place; nothing moves.
enum MovieTimestamps {
    /// `file` with every `mvhd`, `tkhd` and `mdhd` time set to 0. A file it cannot walk is
    /// returned as it is (libavif wrote it; the walk only skips what it does not know).
    static func cleared(_ file: [UInt8]) -> [UInt8] {
        var file = file
        clear(&file, in: 0..<file.count)
        return file
    }

    /// The boxes that hold others on the way to the timed headers.
    private static let containers: Set<String> = ["moov", "trak", "mdia"]
    private static let headers: Set<String> = ["mvhd", "tkhd", "mdhd"]

    private static func clear(_ file: inout [UInt8], in range: Range<Int>) {
        var at = range.lowerBound
        while at + 8 <= range.upperBound {
            var size = Int(u32(file, at))
            var header = 8
            if size == 1 {
                guard at + 16 <= range.upperBound else { return }
                size = Int(clamping: u64(file, at + 8))
                header = 16
            } else if size == 0 {
                size = range.upperBound - at
            }
            guard size >= header, size <= range.upperBound - at else { return }
            let type = String(decoding: file[at + 4..<at + 8], as: UTF8.self)
            let payload = at + header..<at + size
            if containers.contains(type) {
                clear(&file, in: payload)
            } else if headers.contains(type) {
                // FullBox: version, 3 bytes of flags; then the two times, 32 or 64 bits each.
                let width = file[payload.lowerBound] == 1 ? 8 : 4
                let times = payload.lowerBound + 4..<payload.lowerBound + 4 + 2 * width
                if times.upperBound <= payload.upperBound {
                    for index in times { file[index] = 0 }
                }
            }
            at += size
        }
    }

    private static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        bytes[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
