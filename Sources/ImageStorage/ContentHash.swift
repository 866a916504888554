import Crypto

/// SHA-256 in lowercase hex: the content id of an upload.
public enum ContentHash {
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// A digest in lowercase hex.
    static func hex(_ digest: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
