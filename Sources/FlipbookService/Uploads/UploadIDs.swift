import FoundationEssentials
import URLSigning

/// Upload session ids that every replica sharing `uploads.key` can verify, so a session can be
/// made by the replica its id is routed to rather than the one that answered `POST /uploads`.
///
/// An id is `{random}.{expiry}.{tag}`: 128 random bits as 32 lowercase hex digits, the Unix
/// time in milliseconds by which the first `PUT` must come (`uploads.startSeconds` after the
/// id was made), and the signature of `/uploads/{random}.{expiry}` as ``URLSignature`` makes it
/// (HMAC-SHA256, 43 characters of URL-safe base64) under the shared key, with a salt of its own
/// so a key also used for signed URLs cannot mint ids. Every character is in `[A-Za-z0-9._-]`.
struct UploadIDs: Sendable {
    /// Why an id is refused.
    enum Refusal: Error, Equatable {
        /// Not of the form of an id, or its tag does not verify under the key.
        case invalid
        /// Its start deadline has passed.
        case expired
    }

    /// Characters in an id: 32 + 1 + 13 digits (until the year 2286) + 1 + 43.
    static let length = 90
    static let randomDigits = 32
    static let expiryDigits = 13
    private static let salt = Array("flipbook upload session id".utf8)

    private let signature: URLSignature

    /// - Parameter key: the shared key's bytes; nil or empty makes a random key of this process
    ///   (ids that only it can verify).
    init(key: [UInt8]?) {
        var bytes = key ?? []
        if bytes.isEmpty {
            var generator = SystemRandomNumberGenerator()
            bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        }
        signature = URLSignature(keys: [URLSigningKey(key: bytes, salt: Self.salt)])
    }

    /// The key of the setting `uploads.key` (hex), nil when it is empty.
    static func key(setting: String) -> [UInt8]? {
        setting.isEmpty ? nil : URLSigningKey(setting + ":")?.key
    }

    /// Unix time in milliseconds.
    static func nowMilliseconds() -> Int { Int((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// A new id whose start deadline is `expires` (Unix milliseconds).
    func mint(expires: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let random = Self.hex(generator.next() as UInt64) + Self.hex(generator.next() as UInt64)
        let digits = String(expires)
        let body = random + "." + String(repeating: "0", count: max(0, Self.expiryDigits - digits.count)) + digits
        let signed = signature.sign("/uploads/" + body)
        let tag = signed[signed.index(signed.firstIndex(of: "=")!, offsetBy: 1)...]
        return body + "." + tag
    }

    /// The start deadline of `id` (Unix milliseconds) when it verifies and has not passed at
    /// `now`.
    func verify(_ id: String, now: Int) -> Result<Int, Refusal> {
        guard Self.hasShape(id) else { return .failure(.invalid) }
        let bytes = Array(id.utf8)
        let expiryStart = Self.randomDigits + 1
        let expiryEnd = expiryStart + Self.expiryDigits
        guard bytes[..<Self.randomDigits].allSatisfy({ Self.isLowerHex($0) }),
            bytes[expiryStart..<expiryEnd].allSatisfy({ $0 &- 0x30 < 10 }), bytes[expiryEnd] == 0x2e
        else { return .failure(.invalid) }
        let body = String(decoding: bytes[..<expiryEnd], as: UTF8.self)
        let tag = String(decoding: bytes[(expiryEnd + 1)...], as: UTF8.self)
        guard signature.verify("/uploads/\(body)?sig=\(tag)", now: 0) == nil else { return .failure(.invalid) }
        let expires = bytes[expiryStart..<expiryEnd].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return now < expires ? .success(expires) : .failure(.expired)
    }

    /// A quick test that lets an image id (64 hex digits) or a name pass by without hashing: the
    /// length and the first separator of an upload id.
    static func hasShape(_ id: String) -> Bool {
        // The length first, without reaching the bytes (a frame's content id is longer).
        guard id.utf8.count == length else { return false }
        var id = id
        return id.withUTF8 { $0[randomDigits] == 0x2e }
    }

    private static func isLowerHex(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 || byte &- 0x61 < 6 }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
