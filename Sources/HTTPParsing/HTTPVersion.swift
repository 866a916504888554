/// The HTTP version of a request (`HTTP/1.0` or `HTTP/1.1`; the parser answers 505 to others).
public struct HTTPVersion: Hashable, Sendable, CustomStringConvertible {
    /// The major version digit.
    public var major: Int
    /// The minor version digit.
    public var minor: Int

    /// HTTP/1.0: connections close after each response unless the client asks for keep-alive.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    /// HTTP/1.1: connections persist unless either side says `Connection: close`.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    public var description: String { "HTTP/\(major).\(minor)" }
}
