/// One entry of `security.urlKeys`: `KEY:SALT`, each in hexadecimal (imgproxy's pair). The key is
/// the HMAC key; the salt is hashed before the signed text.
public struct URLSigningKey: Sendable, Equatable {
    public let key: [UInt8]
    public let salt: [UInt8]

    public init(key: [UInt8], salt: [UInt8]) {
        self.key = key
        self.salt = salt
    }

    /// Parses `KEY:SALT` (hex, even length, key not empty); nil when malformed.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let key = Self.hex(parts[0]), !key.isEmpty, let salt = Self.hex(parts[1]) else {
            return nil
        }
        self.init(key: key, salt: salt)
    }

    static func hex(_ text: Substring) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let high = nibble(utf8[i]), let low = nibble(utf8[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
            i += 2
        }
        return bytes
    }

    static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x61...0x66: byte - 0x61 + 10
        case 0x41...0x46: byte - 0x41 + 10
        default: nil
        }
    }
}
