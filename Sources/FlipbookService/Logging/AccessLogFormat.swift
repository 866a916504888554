import Glibc
import HTTPServer

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

    /// The most bytes ``write(_:clock:to:)`` can write for `line`: every field at its longest
    /// escape (six bytes for one).
    func maximumLength(of line: AccessLogLine) -> Int {
        let path = min(line.record.pathByteCountBound, Self.maximumPathBytes) + 3
        let variable = path + line.record.requestID.count + line.client.utf8.count + line.record.method.rawValue.utf8.count
        return 256 + JSONString.maximumEscapedBytesPerByte * variable
    }

    /// Writes the line (with its newline) at `out`, which has room for ``maximumLength(of:)``
    /// bytes; returns the number of bytes written. The fields are copied from where they are
    /// (the request head's path and id, the peer's address), escaped as they are copied.
    func write(_ line: AccessLogLine, clock: inout AccessLogClock, to out: UnsafeMutableRawPointer) -> Int {
        clock.refresh()
        var cursor = ByteCursor(out)
        let json = self == .json
        if json {
            cursor.write("{\"ts\":\"")
            cursor.write(clock.jsonSecond)
            clock.writeJSONMilliseconds(to: &cursor)
            cursor.write("\",\"level\":\"info\",\"label\":\"flipbook\",\"msg\":\"request\",\"bytes\":\"")
        } else {
            cursor.write(clock.textTimestamp)
            cursor.write(" info flipbook: bytes=")
        }
        cursor.writeDecimal(line.record.bodyBytes)
        cursor.write(json ? "\",\"client\":\"" : " client=")
        Self.writeEscaped(line.client, json: json, to: &cursor)
        cursor.write(json ? "\",\"component\":\"access\",\"method\":\"" : " component=access method=")
        // A method of the server's constants is a token: nothing in it to escape, nor to read.
        if let token = line.record.method.constantToken {
            cursor.write(token)
        } else {
            Self.writeEscaped(line.record.method.rawValue, json: json, to: &cursor)
        }
        cursor.write(json ? "\",\"ms\":\"" : " ms=")
        Self.writeMilliseconds(line.record.durationNanoseconds, to: &cursor)
        cursor.write(json ? "\",\"path\":\"" : " path=")
        line.record.withPathBytes { bytes, visibleASCII in
            // A text line copies a path of visible ASCII as it is: nothing in it to escape.
            Self.writePath(bytes, json: json, clean: visibleASCII && !json, to: &cursor)
        }
        cursor.write(json ? "\",\"requestID\":\"" : " requestID=")
        // An id is visible ASCII (``HTTPRequestID``): only JSON has anything to escape in it.
        line.record.requestID.withUnsafeBytes { json ? Self.writeEscaped($0, json: true, to: &cursor) : cursor.write($0) }
        cursor.write(json ? "\",\"status\":\"" : " status=")
        cursor.writeDecimal(line.record.status)
        cursor.write(json ? "\"}\n" : " [FlipbookService] request\n")
        return cursor.offset
    }

    /// Writes `bytes`, escaped unless `clean` (nothing in them to escape), cut at
    /// ``maximumPathBytes``.
    private static func writePath(_ bytes: UnsafeRawBufferPointer, json: Bool, clean: Bool, to cursor: inout ByteCursor) {
        if bytes.count <= maximumPathBytes {
            if clean { cursor.write(bytes) } else { writeEscaped(bytes, json: json, to: &cursor) }
        } else {
            writeEscaped(UnsafeRawBufferPointer(rebasing: bytes[0..<maximumPathBytes]), json: json, to: &cursor)
            cursor.write(0xE2, 0x80)  // …
            cursor.write(0xA6)
        }
    }

    private static func writeEscaped(_ text: String, json: Bool, to cursor: inout ByteCursor) {
        var text = text
        text.withUTF8 { writeEscaped(UnsafeRawBufferPointer($0), json: json, to: &cursor) }
    }

    /// JSON: ``JSONString``'s escapes. Text: control characters and DEL escaped (`\n`, `\r`,
    /// `\t`, `\xXX`), so one record is always one line.
    private static func writeEscaped(_ bytes: UnsafeRawBufferPointer, json: Bool, to cursor: inout ByteCursor) {
        if json {
            cursor.advance(JSONString.writeEscaped(bytes, to: cursor.position))
            return
        }
        // Most values need no escape: copy the clean prefix in one go.
        let clean = ByteSearch.firstControlByte(in: bytes) ?? bytes.count
        cursor.write(UnsafeRawBufferPointer(rebasing: bytes[0..<clean]))
        guard clean < bytes.count else { return }
        for byte in bytes[clean...] {
            switch byte {
            case 0x0A: cursor.write(0x5C, 0x6E)
            case 0x0D: cursor.write(0x5C, 0x72)
            case 0x09: cursor.write(0x5C, 0x74)
            case 0..<0x20, 0x7F:
                cursor.write(0x5C, 0x78)
                cursor.write(JSONString.hexDigit(byte >> 4), JSONString.hexDigit(byte & 0xF))
            default: cursor.write(byte)
            }
        }
    }

    /// Milliseconds with two decimals, rounded (`0.05`, `12.30`).
    private static func writeMilliseconds(_ nanoseconds: Int64, to cursor: inout ByteCursor) {
        let hundredths = (max(0, nanoseconds) + 5_000) / 10_000
        cursor.writeDecimal(Int(hundredths / 100))
        let fraction = UInt8(truncatingIfNeeded: hundredths % 100)
        cursor.write(0x2E)
        cursor.write(0x30 + fraction / 10, 0x30 + fraction % 10)
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
    func writeJSONMilliseconds(to cursor: inout ByteCursor) {
        let value = UInt16(truncatingIfNeeded: milliseconds)
        cursor.write(0x2E, 0x30 + UInt8(truncatingIfNeeded: value / 100))
        cursor.write(0x30 + UInt8(truncatingIfNeeded: value / 10 % 10), 0x30 + UInt8(truncatingIfNeeded: value % 10))
        cursor.write(0x5A)
    }

    private static func format(_ pattern: String, _ parts: inout tm) -> [UInt8] {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, pattern, &parts)
        return buffer.prefix(count).map { UInt8(bitPattern: $0) }
    }
}
