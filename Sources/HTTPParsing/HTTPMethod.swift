/// An HTTP request method token (`GET`, `POST`, …), compared case-sensitively as RFC 9110 requires.
// swift-format-ignore: AlwaysUseLowerCamelCase
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method token exactly as it appeared on the request line.
    public let rawValue: String
    /// A number of its own for each of the constants below (0 for any other value): two
    /// constants compare by it, without comparing their strings (the router compares methods on
    /// every request).
    private let tag: UInt8

    /// Wraps a method token. The token is not validated here; the parser only produces valid ones.
    public init(rawValue: String) {
        self.rawValue = rawValue
        tag = 0
    }

    private init(_ rawValue: String, tag: UInt8) {
        self.rawValue = rawValue
        self.tag = tag
    }

    public var description: String { rawValue }

    public static func == (a: HTTPMethod, b: HTTPMethod) -> Bool {
        if a.tag != 0 && b.tag != 0 { return a.tag == b.tag }
        return a.rawValue == b.rawValue
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    public static let GET = HTTPMethod("GET", tag: 1)
    public static let HEAD = HTTPMethod("HEAD", tag: 2)
    public static let POST = HTTPMethod("POST", tag: 3)
    public static let PUT = HTTPMethod("PUT", tag: 4)
    public static let DELETE = HTTPMethod("DELETE", tag: 5)
    public static let PATCH = HTTPMethod("PATCH", tag: 6)
    public static let OPTIONS = HTTPMethod("OPTIONS", tag: 7)
    public static let TRACE = HTTPMethod("TRACE", tag: 8)
    public static let CONNECT = HTTPMethod("CONNECT", tag: 9)

    /// The token of a method made as one of the constants above, read from its number (no
    /// string looked at), or nil: for writers that copy it as bytes.
    package var constantToken: StaticString? {
        switch tag {
        case 1: "GET"
        case 2: "HEAD"
        case 3: "POST"
        case 4: "PUT"
        case 5: "DELETE"
        case 6: "PATCH"
        case 7: "OPTIONS"
        case 8: "TRACE"
        case 9: "CONNECT"
        default: nil
        }
    }

    /// The position of a method made as one of the constants above in the order they are
    /// declared (`GET` 0 … `CONNECT` 8), or nil.
    package var constantIndex: Int? { tag == 0 ? nil : Int(tag) - 1 }

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
