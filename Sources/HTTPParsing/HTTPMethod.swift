/// An HTTP request method token (`GET`, `POST`, …), compared case-sensitively as RFC 9110 requires.
// swift-format-ignore: AlwaysUseLowerCamelCase
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method token exactly as it appeared on the request line.
    public let rawValue: String

    /// Wraps a method token. The token is not validated here; the parser only produces valid ones.
    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    public static let GET = HTTPMethod(rawValue: "GET")
    public static let HEAD = HTTPMethod(rawValue: "HEAD")
    public static let POST = HTTPMethod(rawValue: "POST")
    public static let PUT = HTTPMethod(rawValue: "PUT")
    public static let DELETE = HTTPMethod(rawValue: "DELETE")
    public static let PATCH = HTTPMethod(rawValue: "PATCH")
    public static let OPTIONS = HTTPMethod(rawValue: "OPTIONS")
    public static let TRACE = HTTPMethod(rawValue: "TRACE")
    public static let CONNECT = HTTPMethod(rawValue: "CONNECT")

    /// Maps the bytes of a method token to a method, reusing the common constants.
    package static func from(_ bytes: UnsafeRawBufferPointer) -> HTTPMethod {
        switch bytes.count {
        case 3:
            if bytes[0] == 0x47, bytes[1] == 0x45, bytes[2] == 0x54 { return .GET }
            if bytes[0] == 0x50, bytes[1] == 0x55, bytes[2] == 0x54 { return .PUT }
        case 4:
            if bytes[0] == 0x48, bytes[1] == 0x45, bytes[2] == 0x41, bytes[3] == 0x44 { return .HEAD }
            if bytes[0] == 0x50, bytes[1] == 0x4F, bytes[2] == 0x53, bytes[3] == 0x54 { return .POST }
        default:
            break
        }
        return HTTPMethod(rawValue: String(decoding: bytes, as: UTF8.self))
    }
}
