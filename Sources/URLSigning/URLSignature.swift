import Crypto
import FoundationEssentials

/// Signed request URLs: `sig` = URL-safe base64 without padding of
/// HMAC-SHA256(key, salt ‖ path ‖ `?` ‖ query), where path is the request target's path exactly
/// as sent and query is the target's query with the `sig` parameter taken out, the other
/// parameters in the order given (`exp` among them: it is signed like the rest). imgproxy's
/// scheme, moved from the path into query parameters.
///
/// The signature is found by its parameter's name (`sig`, percent-decoded), never by searching
/// the target for its value; any of the keys verifies it (rotation); the comparison takes the
/// same time whatever bytes differ.
public struct URLSignature: Sendable {
    /// Why a target does not verify.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case missing
        case malformed(String)
        case mismatch
        case expired

        public var description: String {
            switch self {
            case .missing: "the URL needs a signature (sig)"
            case .malformed(let why): "the signature is malformed: \(why)"
            case .mismatch: "the signature does not match"
            case .expired: "the signed URL has expired (exp)"
            }
        }
    }

    /// Each key's HMAC with its salt already absorbed: verifying copies it instead of hashing
    /// the key pads again.
    private let prepared: [PreparedMAC]

    /// An HMAC state that is only ever copied, never mutated in place: swift-crypto's digest
    /// state is copy-on-write (a shared state is copied before an update), so threads may each
    /// take a copy of the same one.
    struct PreparedMAC: @unchecked Sendable {
        let mac: HMAC<SHA256>
    }

    /// - Parameter keys: the first signs; all verify.
    public init(keys: [URLSigningKey]) {
        prepared = keys.map { entry in
            var mac = HMAC<SHA256>(key: SymmetricKey(data: entry.key))
            mac.update(data: entry.salt)
            return PreparedMAC(mac: mac)
        }
    }

    public var isEnabled: Bool { !prepared.isEmpty }

    /// `target` (`/path?query`) with `exp` (when `expires` is given: Unix seconds) and `sig`
    /// appended, signed with the first key.
    public func sign(_ target: String, expires: Int? = nil) -> String {
        precondition(!prepared.isEmpty, "no signing key")
        var signed = target
        if let expires { signed += (signed.contains("?") ? "&" : "?") + "exp=\(expires)" }
        let bytes = Array(signed.utf8)
        let split = bytes.firstIndex(of: 0x3f) ?? bytes.endIndex
        var mac = prepared[0].mac
        mac.update(data: bytes[..<split])
        mac.update(data: [0x3f])
        if split < bytes.endIndex { mac.update(data: bytes[(split + 1)...]) }
        let sig = Self.base64URL(Array(mac.finalize()))
        return signed + (split < bytes.endIndex ? "&" : "?") + "sig=" + sig
    }

    /// Checks `target` (the request target as sent) at Unix time `now`: nil when it verifies,
    /// else why not.
    public func verify(_ target: String, now: Int) -> Failure? {
        var target = target
        return target.withUTF8 { verify(UnsafeRawBufferPointer($0), now: now) }
    }

    public func verify(_ target: UnsafeRawBufferPointer, now: Int) -> Failure? {
        let end = target.count
        var split = 0
        while split < end, target[split] != 0x3f { split += 1 }
        guard split < end else { return .missing }
        // The query's items; `sig` and `exp` found by name.
        var sigRange: Range<Int>? = nil
        var expiry: Int? = nil
        var items: [Range<Int>] = []
        items.reserveCapacity(8)
        var start = split + 1
        while start <= end {
            var stop = start
            while stop < end, target[stop] != 0x26 { stop += 1 }
            var nameEnd = start
            while nameEnd < stop, target[nameEnd] != 0x3d { nameEnd += 1 }
            let name = UnsafeRawBufferPointer(rebasing: target[start..<nameEnd])
            let valueStart = min(nameEnd + 1, stop)
            if Self.nameIs(name, "sig") {
                guard sigRange == nil else { return .malformed("more than one sig") }
                sigRange = valueStart..<stop
            } else {
                if Self.nameIs(name, "exp") {
                    guard expiry == nil else { return .malformed("more than one exp") }
                    guard let value = Self.decimal(UnsafeRawBufferPointer(rebasing: target[valueStart..<stop])) else {
                        return .malformed("exp is not a number of seconds")
                    }
                    expiry = value
                }
                items.append(start..<stop)
            }
            start = stop + 1
        }
        guard let sigRange else { return .missing }
        guard let given = Self.decodeBase64URL(UnsafeRawBufferPointer(rebasing: target[sigRange])), given.count == 32
        else { return .malformed("sig is not 43 characters of URL-safe base64") }
        // The signed text, gathered into one buffer on the stack: one update per key (each call
        // into swift-crypto's generic update costs more than hashing a few dozen bytes).
        var matched: UInt8 = 1
        withUnsafeTemporaryAllocation(byteCount: max(end, 1), alignment: 1) { buffer in
            var length = 0
            func append(_ range: Range<Int>) {
                guard !range.isEmpty else { return }
                buffer.baseAddress!.advanced(by: length).copyMemory(
                    from: target.baseAddress!.advanced(by: range.lowerBound), byteCount: range.count)
                length += range.count
            }
            append(0..<(split + 1))  // path and `?`
            for (index, item) in items.enumerated() {
                if index > 0 {
                    buffer[length] = 0x26
                    length += 1
                }
                append(item)
            }
            let text = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<length])
            for base in prepared {
                var mac = base.mac
                mac.update(data: text)
                let code = mac.finalize()
                var difference: UInt8 = 0
                code.withUnsafeBytes { bytes in
                    for i in 0..<32 { difference |= bytes[i] ^ given[i] }
                }
                matched &= difference == 0 ? 0 : 1  // 0 once any key matched
            }
        }
        guard matched == 0 else { return .mismatch }
        if let expiry, now > expiry { return .expired }
        return nil
    }

    /// The query of `target` without its `sig` parameter (raw, in the order given), or nil when
    /// the target carries no `sig`.
    public static func queryWithoutSignature(_ target: String) -> String? {
        guard let mark = target.firstIndex(of: "?") else { return nil }
        var found = false
        var kept: [Substring] = []
        for item in target[target.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false) {
            let name = item.prefix { $0 != "=" }
            let isSig = Array(name.utf8).withUnsafeBytes { nameIs($0, "sig") }
            if isSig { found = true } else { kept.append(item) }
        }
        return found ? kept.joined(separator: "&") : nil
    }

    /// Whether a raw parameter name, percent-decoded, is `expected` (lower-case ASCII).
    static func nameIs(_ raw: UnsafeRawBufferPointer, _ expected: StaticString) -> Bool {
        let want = UnsafeRawBufferPointer(start: expected.utf8Start, count: expected.utf8CodeUnitCount)
        var i = 0
        var j = 0
        while i < raw.count {
            var byte = raw[i]
            if byte == 0x25, i + 2 < raw.count,
                let high = URLSigningKey.nibble(raw[i + 1]), let low = URLSigningKey.nibble(raw[i + 2])
            {
                byte = high << 4 | low
                i += 3
            } else {
                i += 1
            }
            guard j < want.count, byte == want[j] else { return false }
            j += 1
        }
        return j == want.count
    }

    static func decimal(_ raw: UnsafeRawBufferPointer) -> Int? {
        guard (1...12).contains(raw.count) else { return nil }
        var value = 0
        for byte in raw {
            guard byte &- 0x30 < 10 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// URL-safe base64, no padding.
    public static func base64URL(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int(n >> UInt32(shift) & 63)]) }
            i += 3
        }
        let left = bytes.count - i
        if left > 0 {
            let n = UInt32(bytes[i]) << 16 | (left == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            if left == 2 { out.append(alphabet[Int(n >> 6 & 63)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes URL-safe base64 without padding; nil on any other byte or a bad length.
    static func decodeBase64URL(_ raw: UnsafeRawBufferPointer) -> [UInt8]? {
        guard raw.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(raw.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in raw {
            let value: UInt8
            switch byte {
            case 0x41...0x5a: value = byte - 0x41
            case 0x61...0x7a: value = byte - 0x61 + 26
            case 0x30...0x39: value = byte - 0x30 + 52
            case 0x2d: value = 62
            case 0x5f: value = 63
            default: return nil
            }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero (one spelling per signature).
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}
