/// Distinct small animations for tests of many images: 8×8 GIFs of two frames, the seed written
/// into the palette, so every seed gives different bytes (a different content id).
public enum TinyAnimations {
    /// The animation of `seed`: a 4-colour palette whose entries spell the seed's bytes, and two
    /// frames of 100 ms (a checkerboard, then its inverse).
    public static func gif(seed: UInt64) -> [UInt8] {
        var gif = GIFBuilder(width: 8, height: 8)
        var bytes: [UInt8] = (0..<8).map { UInt8(truncatingIfNeeded: seed >> (8 * UInt64($0))) }
        bytes += [0x11, 0x22, 0x33, 0x44]
        gif.globalPalette = (0..<4).map { (bytes[3 * $0], bytes[3 * $0 + 1], bytes[3 * $0 + 2]) }
        let board = (0..<64).map { UInt8(($0 / 8 + $0 % 8) % 2) }
        gif.frames = [
            GIFBuilder.Frame(rect: (0, 0, 8, 8), indices: board, delayCentiseconds: 10),
            GIFBuilder.Frame(rect: (0, 0, 8, 8), indices: board.map { 3 - $0 }, delayCentiseconds: 10),
        ]
        return gif.build()
    }
}
