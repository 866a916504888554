/// An opaque colour that frames are composited onto when their format has no alpha (an MP4's
/// H.264): the colour where a frame is transparent, blended with it where it is partly so.
/// Written as CSS writes a hex colour without `#`: `RRGGBB` or `RGB` (`fff` = `ffffff`), either
/// case.
public struct OpaqueBackground: Sendable, Hashable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    /// White, `ffffff`: the background when none is asked for.
    public static let white = OpaqueBackground(red: 255, green: 255, blue: 255)

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        (self.red, self.green, self.blue) = (red, green, blue)
    }

    /// The colour `text` writes (`RRGGBB` or `RGB`, hex digits of either case); nil for anything else.
    public init?(hex text: String) {
        let digits = text.utf8.map(Self.hexValue)
        guard digits.count == 3 || digits.count == 6, digits.allSatisfy({ $0 != nil }) else { return nil }
        let values = digits.map { UInt8($0!) }
        if values.count == 3 {
            self.init(red: values[0] * 17, green: values[1] * 17, blue: values[2] * 17)
        } else {
            self.init(red: values[0] << 4 | values[1], green: values[2] << 4 | values[3], blue: values[4] << 4 | values[5])
        }
    }

    /// Six lowercase hex digits, `rrggbb`: how names and keys write the colour.
    public var hex: String {
        [red, green, blue].map { value in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(value >> 4)], digits[Int(value & 15)]], as: UTF8.self)
        }.joined()
    }

    public var description: String { hex }

    /// `pixels` (RGBA, not premultiplied) composited onto this colour: every pixel opaque, a
    /// partly transparent one blended (`(c·α + b·(255 − α)) / 255`, rounded), an opaque one as it was.
    public func flattened(_ pixels: [UInt8]) -> [UInt8] {
        var out = pixels
        let back = [UInt32(red), UInt32(green), UInt32(blue)]
        var at = 0
        while at + 3 < out.count {
            let alpha = UInt32(out[at + 3])
            if alpha != 255 {
                for channel in 0..<3 {
                    let blended = UInt32(out[at + channel]) * alpha + back[channel] * (255 - alpha)
                    out[at + channel] = UInt8((blended + 127) / 255)
                }
                out[at + 3] = 255
            }
            at += 4
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
    }
}
