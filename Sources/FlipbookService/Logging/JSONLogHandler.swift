import FoundationEssentials
import Glibc
import HTTPServer
import Logging
import Synchronization

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
        var line =
            "{\"ts\":\"\(Self.timestamp())\",\"level\":\"\(event.level.rawValue)\","
            + "\"label\":\(JSONString.quoted(label)),\"msg\":\(JSONString.quoted("\(event.message)"))"
        for key in fields.keys.sorted() {
            line += ",\(JSONString.quoted(key)):\(JSONString.quoted(fields[key]!))"
        }
        line += "}\n"
        Self.output.write(line)
    }

    private static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    static func timestamp() -> String {
        Date().formatted(timestampStyle)
    }

    /// Keeps concurrent lines whole.
    private final class OutputLock: Sendable {
        private let lock = Mutex(())
        func write(_ line: String) {
            lock.withLock { _ in StandardStreams.write(line, to: STDERR_FILENO) }
        }
    }
}
