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
        for box in ISOBoxes.children(file, range) ?? [] {
            if containers.contains(box.type) {
                clear(&file, in: box.payload)
            } else if headers.contains(box.type), !box.payload.isEmpty {
                // FullBox: version, 3 bytes of flags; then the two times, 32 or 64 bits each.
                let width = file[box.payload.lowerBound] == 1 ? 8 : 4
                let times = box.payload.lowerBound + 4..<box.payload.lowerBound + 4 + 2 * width
                if times.upperBound <= box.payload.upperBound {
                    for index in times { file[index] = 0 }
                }
            }
        }
    }
}
