import HTTPServer

#if canImport(Glibc)
import Glibc
#endif

/// One access-log line's content: the response as the server reported it, and the client
/// address worked out from it (the peer, or the forwarded client behind a trusted proxy).
struct AccessLogLine {
    var record: HTTPAccessRecord
    var client: String
}

/// How access-log lines look — the same as the swift-log lines they replaced, so parsers of the
/// old lines keep working:
///
/// - `text`: `2026-11-23T21:20:00+0000 info flipbook: bytes=51234 client=10.0.0.7 component=access
///   method=GET ms=0.05 path=/frames/… requestID=… status=200 [FlipbookService] request`
///   (swift-log's stream format; control characters in values are escaped, so a path cannot
///   forge a line).
/// - `json`: `{"ts":"2026-11-23T21:20:00.123Z","level":"info","label":"flipbook","msg":"request",
///   "bytes":"51234","client":…,"component":"access","method":…,"ms":"0.05","path":…,
///   "requestID":…,"status":"200"}` (values are strings, as the JSON log handler writes them).
///
/// Paths longer than ``maximumPathBytes`` are cut (with `…`): a line always fits in a chunk.
public enum AccessLogFormat: Sendable {
    case text
    case json

    static let maximumPathBytes = 2048

    /// The most bytes `append` can write for `line`.
    func maximumLength(of line: AccessLogLine) -> Int {
        let path = min(line.record.pathByteCountBound, Self.maximumPathBytes) + 3
        let variable = path + line.record.requestID.count + line.client.utf8.count + line.record.method.rawValue.utf8.count
        return 256 + 6 * variable
    }

    /// Appends the line (with its newline) to `out`.
    func append(_ line: AccessLogLine, clock: inout AccessLogClock, to out: inout [UInt8]) {
        clock.refresh()
        append(line.record, client: line.client, clock: &clock, to: &out)
    }

    private func append(
        _ record: HTTPAccessRecord, client: String, clock: inout AccessLogClock, to out: inout [UInt8]
    ) {
        switch self {
        case .text:
            out.append(contentsOf: clock.textTimestamp)
            out.append(contentsOf: Self.textLevel)
            Self.appendText(" bytes=", to: &out)
            Self.appendDecimal(record.bodyBytes, to: &out)
            Self.appendText(" client=", to: &out)
            Self.appendEscaped(client, json: false, to: &out)
            Self.appendText(" component=access method=", to: &out)
            Self.appendEscaped(record.method.rawValue, json: false, to: &out)
            Self.appendText(" ms=", to: &out)
            Self.appendMilliseconds(record.durationNanoseconds, to: &out)
            Self.appendText(" path=", to: &out)
            record.withPathUTF8 { Self.appendPath($0, json: false, to: &out) }
            Self.appendText(" requestID=", to: &out)
            record.requestID.withUnsafeBytes { Self.appendEscaped($0, json: false, to: &out) }
            Self.appendText(" status=", to: &out)
            Self.appendDecimal(record.status, to: &out)
            out.append(contentsOf: Self.textTail)
        case .json:
            Self.appendText("{\"ts\":\"", to: &out)
            out.append(contentsOf: clock.jsonSecond)
            clock.appendJSONMilliseconds(to: &out)
            out.append(contentsOf: Self.jsonHead)
            Self.appendDecimal(record.bodyBytes, to: &out)
            Self.appendText("\",\"client\":\"", to: &out)
            Self.appendEscaped(client, json: true, to: &out)
            Self.appendText("\",\"component\":\"access\",\"method\":\"", to: &out)
            Self.appendEscaped(record.method.rawValue, json: true, to: &out)
            Self.appendText("\",\"ms\":\"", to: &out)
            Self.appendMilliseconds(record.durationNanoseconds, to: &out)
            Self.appendText("\",\"path\":\"", to: &out)
            record.withPathUTF8 { Self.appendPath($0, json: true, to: &out) }
            Self.appendText("\",\"requestID\":\"", to: &out)
            record.requestID.withUnsafeBytes { Self.appendEscaped($0, json: true, to: &out) }
            Self.appendText("\",\"status\":\"", to: &out)
            Self.appendDecimal(record.status, to: &out)
            Self.appendText("\"}\n", to: &out)
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
    private static let textLevel: [UInt8] = Array(" info flipbook:".utf8)
    private static let textTail: [UInt8] = Array(" [FlipbookService] request\n".utf8)
    private static let jsonHead: [UInt8] =
        Array("\",\"level\":\"info\",\"label\":\"flipbook\",\"msg\":\"request\",\"bytes\":\"".utf8)

    @inline(__always)
    private static func appendText(_ text: StaticString, to out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    private static func appendPath(_ bytes: UnsafeRawBufferPointer, json: Bool, to out: inout [UInt8]) {
        if bytes.count <= maximumPathBytes {
            appendEscaped(bytes, json: json, to: &out)
        } else {
            appendEscaped(UnsafeRawBufferPointer(rebasing: bytes[0..<maximumPathBytes]), json: json, to: &out)
            out.append(contentsOf: [0xE2, 0x80, 0xA6])  // …
        }
    }

    private static func appendEscaped(_ text: String, json: Bool, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { appendEscaped(UnsafeRawBufferPointer($0), json: json, to: &out) }
    }

    /// JSON: ``JSONString``'s escapes. Text: control characters and DEL escaped (`\n`, `\r`,
    /// `\t`, `\xXX`), so one record is always one line.
    private static func appendEscaped(_ bytes: UnsafeRawBufferPointer, json: Bool, to out: inout [UInt8]) {
        if json { return JSONString.appendEscaped(bytes, to: &out) }
        // Most values need no escape: copy the clean prefix in one go.
        let clean = ByteSearch.firstControlByte(in: bytes) ?? bytes.count
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<clean]))
        guard clean < bytes.count else { return }
        for byte in bytes[clean...] {
            switch byte {
            case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: out.append(contentsOf: [0x5C, 0x72])
            case 0x09: out.append(contentsOf: [0x5C, 0x74])
            case 0..<0x20, 0x7F:
                out.append(contentsOf: [0x5C, 0x78, Self.hexDigits[Int(byte >> 4)], Self.hexDigits[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
    }

    /// Milliseconds with two decimals, rounded (`0.05`, `12.30`).
    private static func appendMilliseconds(_ nanoseconds: Int64, to out: inout [UInt8]) {
        let hundredths = (max(0, nanoseconds) + 5_000) / 10_000
        appendDecimal(Int(hundredths / 100), to: &out)
        out.append(0x2E)
        let fraction = Int(hundredths % 100)
        out.append(UInt8(0x30 + fraction / 10))
        out.append(UInt8(0x30 + fraction % 10))
    }

    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(0x2D) }
        // The digits from the last, into a buffer on the stack (20 digits hold any Int).
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var rest = value.magnitude
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(truncatingIfNeeded: rest % 10) + 0x30
                rest /= 10
            } while rest > 0
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }
}

/// The time fields of access-log lines, with the part that changes once a second built once a
/// second: the text format's local time (`2026-11-23T21:20:00+0000`, as swift-log writes it) and
/// the JSON format's UTC time up to the second; JSON adds milliseconds per line.
struct AccessLogClock {
    private(set) var textTimestamp: [UInt8] = []
    private(set) var jsonSecond: [UInt8] = []
    private var second = -1
    private var milliseconds = 0

    /// Reads the clock; rebuilds the fields when the second changed.
    mutating func refresh() {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        milliseconds = Int(now.tv_nsec / 1_000_000)
        guard now.tv_sec != second else { return }
        second = now.tv_sec
        var seconds = time_t(now.tv_sec)
        var local = tm()
        localtime_r(&seconds, &local)
        textTimestamp = Self.format("%Y-%m-%dT%H:%M:%S%z", &local)
        var utc = tm()
        gmtime_r(&seconds, &utc)
        jsonSecond = Self.format("%Y-%m-%dT%H:%M:%S", &utc)
    }

    /// `.mmmZ`.
    func appendJSONMilliseconds(to out: inout [UInt8]) {
        out.append(0x2E)
        out.append(UInt8(0x30 + milliseconds / 100))
        out.append(UInt8(0x30 + milliseconds / 10 % 10))
        out.append(UInt8(0x30 + milliseconds % 10))
        out.append(0x5A)
    }

    private static func format(_ pattern: String, _ parts: inout tm) -> [UInt8] {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, pattern, &parts)
        return buffer.prefix(count).map { UInt8(bitPattern: $0) }
    }
}
