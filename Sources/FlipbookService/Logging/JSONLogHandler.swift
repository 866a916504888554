import Foundation
import Logging

/// A swift-log handler that writes one JSON object per line to standard error — what log
/// collectors in container platforms parse without configuration. Fields: `ts` (ISO 8601),
/// `level`, `label`, `msg`, then the metadata.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private static let output = OutputLock()

    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields: [String: String] = [:]
        for (key, value) in metadata { fields[key] = "\(value)" }
        for (key, value) in event.metadata ?? [:] { fields[key] = "\(value)" }
        var line = "{\"ts\":\"\(Self.timestamp())\",\"level\":\"\(event.level.rawValue)\","
            + "\"label\":\(Self.quote(label)),\"msg\":\(Self.quote("\(event.message)"))"
        for key in fields.keys.sorted() {
            line += ",\(Self.quote(key)):\(Self.quote(fields[key]!))"
        }
        line += "}\n"
        Self.output.write(line)
    }

    private static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    static func timestamp() -> String {
        Date().formatted(timestampStyle)
    }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// Keeps concurrent lines whole.
    private final class OutputLock: @unchecked Sendable {
        private let lock = NSLock()
        func write(_ line: String) {
            lock.lock()
            FileHandle.standardError.write(Data(line.utf8))
            lock.unlock()
        }
    }
}
